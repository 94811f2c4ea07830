#!/usr/bin/env python3
"""Writes the structured-output golden files the Swift property tests read (swift test needs
no Python): for every schema of suite.py, its compact instance and mutated strings judged by
`json` + `jsonschema` (with format checking); for every regex/GBNF, mutated and random strings
judged by Python's `re` (re.ASCII, fullmatch) or a reference predicate.

    python3 scripts/structured/make_golden.py      # needs: pip install jsonschema rfc3339-validator
"""
import json
import os
import random
import re
import sys

import jsonschema

sys.path.insert(0, os.path.dirname(__file__))
import suite  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "../../Tests/PhiEngineTests/Fixtures/structured")
CASES = 40
JSON_ALPHABET = list('{}[]:,"\\ 0123456789.-+eEtrufalsn') + ["a", "é", "\n", "\u2713"]


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def mutate(text, alphabet, rng):
    s = list(text)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        op = rng.randrange(5)
        i = rng.randrange(len(s) + 1)
        if op == 0 and s:
            del s[min(i, len(s) - 1)]
        elif op == 1:
            s.insert(i, rng.choice(alphabet))
        elif op == 2 and s:
            s[min(i, len(s) - 1)] = rng.choice(alphabet)
        elif op == 3 and len(s) > 1:  # duplicate a slice
            j = rng.randrange(len(s))
            a, b = sorted((i % len(s), j))
            s[b:b] = s[a:b]
        else:  # swap two characters
            if len(s) > 1:
                j = rng.randrange(len(s))
                k = min(i, len(s) - 1)
                s[j], s[k] = s[k], s[j]
    return "".join(s)


def schema_valid(validator, text):
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return validator.is_valid(value)


def balanced(s):
    depth = 0
    for c in s:
        if c not in "()":
            return False
        depth += 1 if c == "(" else -1
        if depth < 0:
            return False
    return depth == 0


class Parser:
    """Recursive descent for the arithmetic and compact_json suite grammars."""

    def __init__(self, s):
        self.s, self.i = s, 0

    def peek(self):
        return self.s[self.i] if self.i < len(self.s) else ""

    def eat(self, c):
        if self.s.startswith(c, self.i):
            self.i += len(c)
            return True
        return False

    def digits(self):
        j = self.i
        while self.peek().isdigit() and self.peek() in "0123456789":
            self.i += 1
        return self.i > j

    def expr(self):
        if not self.term():
            return False
        while self.peek() in ("+", "-") and self.peek():
            self.i += 1
            if not self.term():
                return False
        return True

    def term(self):
        if not self.factor():
            return False
        while self.peek() in ("*", "/") and self.peek():
            self.i += 1
            if not self.factor():
                return False
        return True

    def factor(self):
        if self.digits():
            return True
        return self.eat("(") and self.expr() and self.eat(")")

    def value(self):
        for word in ("true", "false", "null"):
            if self.eat(word):
                return True
        c = self.peek()
        if c == "{":
            self.i += 1
            if self.eat("}"):
                return True
            while True:
                if not (self.string() and self.eat(":") and self.value()):
                    return False
                if self.eat("}"):
                    return True
                if not self.eat(","):
                    return False
        if c == "[":
            self.i += 1
            if self.eat("]"):
                return True
            while True:
                if not self.value():
                    return False
                if self.eat("]"):
                    return True
                if not self.eat(","):
                    return False
        if c == '"':
            return self.string()
        self.eat("-")
        if not self.digits():
            return False
        if self.eat("."):
            return self.digits()
        return True

    def string(self):
        if not self.eat('"'):
            return False
        while self.peek() and (self.peek() in " " or "a" <= self.peek() <= "z"):
            self.i += 1
        return self.eat('"')


def predicate(name):
    if name == "balanced":
        return balanced

    def whole(method):
        def check(s):
            p = Parser(s)
            return getattr(p, method)() and p.i == len(s)
        return check

    if name == "arithmetic":
        return whole("expr")
    if name == "compact_json":
        return whole("value")
    pattern = re.compile(name, re.ASCII)
    return lambda s: pattern.fullmatch(s) is not None


def main():
    rng = random.Random(29)
    os.makedirs(OUT, exist_ok=True)
    schemas = []
    V = jsonschema.Draft202012Validator
    for name, schema, instance in suite.SCHEMAS:
        validator = V(schema, format_checker=V.FORMAT_CHECKER)
        canonical = compact(instance)
        assert validator.is_valid(instance), name
        seen, cases = {canonical}, [[canonical, True]]
        while len(cases) < CASES:
            text = mutate(canonical, JSON_ALPHABET, rng)
            if text not in seen:
                seen.add(text)
                cases.append([text, schema_valid(validator, text)])
        schemas.append({"name": name, "schema": schema, "cases": cases})
    grammars = []
    for name, kind, source, reference, accepted, refused in suite.GRAMMARS:
        check = predicate(reference)
        for s in accepted:
            assert check(s), (name, s)
        for s in refused:
            assert not check(s), (name, s)
        alphabet = sorted(set("".join(accepted + refused)) | set("a0 (-\n"))
        seen, cases = set(), []
        for s in accepted + refused:
            seen.add(s)
            cases.append([s, check(s)])
        while len(cases) < CASES * 2:
            base = rng.choice(accepted) if rng.random() < 0.8 else ""
            text = mutate(base, alphabet, rng) if base else "".join(
                rng.choice(alphabet) for _ in range(rng.randrange(8)))
            if text not in seen:
                seen.add(text)
                cases.append([text, check(text)])
        grammars.append({"name": name, "kind": kind, "source": source, "cases": cases})
    for file, data in (("schemas.json", schemas), ("grammars.json", grammars)):
        with open(os.path.join(OUT, file), "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=0)
            f.write("\n")
    valid = sum(c[1] for s in schemas for c in s["cases"])
    matched = sum(c[1] for g in grammars for c in g["cases"])
    print(f"{len(schemas)} schemas ({valid} valid cases), {len(grammars)} grammars ({matched} accepted cases)")


if __name__ == "__main__":
    main()
