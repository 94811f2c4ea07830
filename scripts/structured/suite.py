"""The structured-output suite: JSON schemas with a valid instance each (written in schema
property order, as phikit generates), and regular expressions / GBNF grammars with strings
they accept and refuse. make_golden.py, bench_*.py and check_outputs.py all read it.

Instances are serialised compactly (separators ",", ":"; non-ASCII kept) — the form phikit
generates by default — and every one is checked valid by jsonschema when the golden files are
made."""

S, I, N, B, NUL = "string", "integer", "number", "boolean", "null"


def obj(props, required=None, **extra):
    schema = {"type": "object", "properties": props}
    schema["required"] = list(props) if required is None else required
    schema.update(extra)
    return schema


def arr(items, **extra):
    return {"type": "array", "items": items, **extra}


PERSON = obj({"name": {"type": S}, "age": {"type": I, "minimum": 0, "maximum": 150}})
ADDRESS = obj({"street": {"type": S}, "city": {"type": S}, "zip": {"type": S, "pattern": r"^\d{5}$"}})

# (name, schema, instance)
SCHEMAS = [
    ("string", {"type": S}, "hello"),
    ("integer", {"type": I}, -42),
    ("number", {"type": N}, 3.25),
    ("boolean", {"type": B}, True),
    ("null", {"type": NUL}, None),
    ("person", PERSON, {"name": "Ada Lovelace", "age": 36}),
    ("optional_fields", obj({"a": {"type": S}, "b": {"type": I}, "c": {"type": B}}, required=["b"]),
     {"b": 7}),
    ("all_optional", obj({"x": {"type": N}, "y": {"type": N}}, required=[]), {"y": -0.5}),
    ("nested_address", obj({"person": PERSON, "address": ADDRESS}),
     {"person": {"name": "Bo", "age": 3}, "address": {"street": "1 Main St", "city": "Springfield", "zip": "12345"}}),
    ("deep_nesting", obj({"a": obj({"b": obj({"c": obj({"d": {"type": S}})})})}),
     {"a": {"b": {"c": {"d": "deep"}}}}),
    ("string_array", arr({"type": S}), ["a", "b", "c"]),
    ("bounded_array", arr({"type": I}, minItems=2, maxItems=4), [1, 2, 3]),
    ("empty_array_ok", arr({"type": B}, maxItems=3), []),
    ("array_of_objects", arr(PERSON, minItems=1), [{"name": "A", "age": 1}, {"name": "B", "age": 2}]),
    ("matrix", arr(arr({"type": N}, minItems=2, maxItems=2)), [[1.5, 2], [3, 4.25]]),
    ("tuple", {"type": "array", "prefixItems": [{"type": S}, {"type": I}, {"type": B}], "items": False},
     ["x", 1, False]),
    ("tuple_rest", {"type": "array", "prefixItems": [{"const": "head"}], "items": {"type": I}}, ["head", 1, 2]),
    ("enum_strings", {"enum": ["red", "green", "blue"]}, "green"),
    ("enum_mixed", {"enum": ["a", 1, None, True, {"k": [1]}]}, {"k": [1]}),
    ("const", {"const": "fixed value"}, "fixed value"),
    ("enum_in_object", obj({"status": {"type": S, "enum": ["open", "closed", "pending"]}, "priority": {"enum": [1, 2, 3]}}),
     {"status": "pending", "priority": 2}),
    ("nullable_type", obj({"v": {"type": [S, NUL]}}), {"v": None}),
    ("nullable_any_of", obj({"v": {"anyOf": [{"type": I}, {"type": NUL}]}}), {"v": 5}),
    ("any_of", {"anyOf": [{"type": S}, {"type": I}, PERSON]}, {"name": "x", "age": 5}),
    ("one_of_types", {"oneOf": [{"type": S, "maxLength": 3}, {"type": B}]}, "abc"),
    ("one_of_discriminated", {"oneOf": [
        obj({"kind": {"const": "circle"}, "r": {"type": N}}),
        obj({"kind": {"const": "square"}, "side": {"type": N}})]}, {"kind": "square", "side": 2}),
    ("all_of_objects", {"allOf": [obj({"id": {"type": I}}), obj({"label": {"type": S}})]}, {"id": 1, "label": "one"}),
    ("ref_defs", {"$defs": {"pt": obj({"x": {"type": I}, "y": {"type": I}})}, "type": "object",
                  "properties": {"from": {"$ref": "#/$defs/pt"}, "to": {"$ref": "#/$defs/pt"}}, "required": ["from", "to"]},
     {"from": {"x": 0, "y": 0}, "to": {"x": 3, "y": -4}}),
    ("recursive_tree", {"$defs": {"node": obj({"value": {"type": I}, "children": arr({"$ref": "#/$defs/node"})}, required=["value"])},
                        "$ref": "#/$defs/node"},
     {"value": 1, "children": [{"value": 2}, {"value": 3, "children": [{"value": 4, "children": []}]}]}),
    ("recursive_list", {"definitions": {"list": {"anyOf": [{"type": NUL}, obj({"head": {"type": S}, "tail": {"$ref": "#/definitions/list"}})]}},
                        "$ref": "#/definitions/list"},
     {"head": "a", "tail": {"head": "b", "tail": None}}),
    ("pattern_zip", {"type": S, "pattern": r"^\d{5}(-\d{4})?$"}, "12345-6789"),
    ("pattern_id", {"type": S, "pattern": r"^[A-Z]{3}-[0-9a-f]{4,8}$"}, "ABC-00ff"),
    ("pattern_unanchored", {"type": S, "pattern": "[a-z]+@[a-z]+"}, "me@host"),
    ("pattern_escapes", {"type": S, "pattern": r'^"[^"\\]*"$'}, '"quoted"'),
    ("format_date", {"type": S, "format": "date"}, "2024-02-28"),
    ("format_time", {"type": S, "format": "time"}, "13:45:00Z"),
    ("format_datetime", {"type": S, "format": "date-time"}, "2024-12-31T23:59:59.5+01:00"),
    ("format_uuid", {"type": S, "format": "uuid"}, "123e4567-e89b-12d3-a456-426614174000"),
    ("format_email", {"type": S, "format": "email"}, "ada.lovelace@example.org"),
    ("string_lengths", obj({"code": {"type": S, "minLength": 2, "maxLength": 4}, "note": {"type": S, "maxLength": 10}}),
     {"code": "abc", "note": ""}),
    ("integer_ranges", obj({"small": {"type": I, "minimum": -5, "maximum": 5}, "big": {"type": I, "minimum": 1000},
                            "excl": {"type": I, "exclusiveMinimum": 0, "exclusiveMaximum": 10}}),
     {"small": -5, "big": 123456, "excl": 9}),
    ("number_bounds", obj({"p": {"type": N, "minimum": 0, "maximum": 1}, "t": {"type": N, "minimum": 0}}), {"p": 0.25, "t": 98.6}),
    ("additional_schema", {"type": "object", "properties": {"id": {"type": I}}, "required": ["id"],
                           "additionalProperties": {"type": S}}, {"id": 3, "extra": "yes"}),
    ("free_object", {"type": "object"}, {"any": [1, {"thing": None}], "b": True}),
    ("free_array", {"type": "array"}, [1, "two", [3], {"four": 4}]),
    ("any_value", {}, {"x": [True, None, 1.5e3]}),
    ("unicode_strings", obj({"text": {"type": S}}), {"text": "héllo wörld — ünïcödé ✓"}),
    ("escaped_strings", obj({"text": {"type": S}}), {"text": "line1\nline2\t\"quoted\" back\\slash"}),
    ("required_not_declared", {"type": "object", "properties": {"a": {"type": I}}, "required": ["a", "b"],
                               "additionalProperties": {"type": B}}, {"a": 1, "b": True}),
    ("annotations", {"title": "T", "description": "D", "$schema": "https://json-schema.org/draft/2020-12/schema",
                     "type": "object", "properties": {"a": {"type": S, "description": "an a", "default": "x"}},
                     "required": ["a"], "additionalProperties": False}, {"a": "y"}),
    ("tool_weather", obj({"location": {"type": S, "description": "City and country"},
                          "unit": {"type": S, "enum": ["celsius", "fahrenheit"]}}, required=["location"],
                         additionalProperties=False),
     {"location": "Paris, France", "unit": "celsius"}),
    ("tool_search", obj({"query": {"type": S, "minLength": 1}, "limit": {"type": I, "minimum": 1, "maximum": 50},
                         "filters": obj({"site": {"type": S}, "after": {"type": S, "format": "date"}}, required=[])},
                        required=["query"], additionalProperties=False),
     {"query": "swift grammars", "limit": 10, "filters": {"after": "2024-01-01"}}),
    ("tool_calendar", obj({"title": {"type": S}, "start": {"type": S, "format": "date-time"},
                           "attendees": arr({"type": S, "format": "email"}, maxItems=5),
                           "reminder_minutes": {"type": [I, NUL], "minimum": 0, "maximum": 1440}}),
     {"title": "Sync", "start": "2025-03-01T09:00:00Z", "attendees": ["a@b.co"], "reminder_minutes": 15}),
    ("tool_sql", obj({"sql": {"type": S}, "params": arr({"anyOf": [{"type": S}, {"type": N}, {"type": NUL}]})}),
     {"sql": "select * from t where id = ?", "params": [1, None, "x"]}),
    ("extraction_invoice", obj({"invoice_number": {"type": S}, "date": {"type": S, "format": "date"},
                                "vendor": obj({"name": {"type": S}, "vat_id": {"type": [S, NUL]}}),
                                "lines": arr(obj({"description": {"type": S}, "quantity": {"type": I, "minimum": 1},
                                                  "unit_price": {"type": N, "minimum": 0}}), minItems=1),
                                "currency": {"enum": ["EUR", "USD", "GBP"]}, "paid": {"type": B}}),
     {"invoice_number": "INV-001", "date": "2025-01-15", "vendor": {"name": "ACME", "vat_id": None},
      "lines": [{"description": "Widget", "quantity": 3, "unit_price": 9.99}], "currency": "EUR", "paid": False}),
    ("extraction_person", obj({"first_name": {"type": S}, "last_name": {"type": S}, "birth_year": {"type": I, "minimum": 1900, "maximum": 2025},
                               "occupation": {"type": S}, "languages": arr({"type": S})}),
     {"first_name": "Grace", "last_name": "Hopper", "birth_year": 1906, "occupation": "computer scientist", "languages": ["COBOL"]}),
    ("sentiment", obj({"sentiment": {"enum": ["positive", "negative", "neutral"]}, "confidence": {"type": N, "minimum": 0, "maximum": 1}}),
     {"sentiment": "positive", "confidence": 0.9}),
    ("classification_labels", obj({"labels": arr({"enum": ["bug", "feature", "question", "docs"]}, minItems=1, maxItems=3)}),
     {"labels": ["bug", "docs"]}),
    ("key_value_list", arr(obj({"key": {"type": S, "pattern": "^[a-z_]+$"}, "value": {"type": [S, I, B]}})),
     [{"key": "a_b", "value": 1}, {"key": "c", "value": "d"}]),
    ("geojson_point", obj({"type": {"const": "Point"}, "coordinates": {"type": "array", "prefixItems": [{"type": N}, {"type": N}], "items": False, "minItems": 2}}),
     {"type": "Point", "coordinates": [2.35, 48.85]}),
]

# (name, kind, source, reference, accepted examples, refused examples). `reference` is the
# Python regular expression (re.ASCII, fullmatch) with the same language, or the name of a
# predicate in make_golden.py for grammars that are not regular.
GRAMMARS = [
    ("regex_phone", "regex", r"^\(\d{3}\) \d{3}-\d{4}$", r"\(\d{3}\) \d{3}-\d{4}", ["(555) 123-4567"], ["555-123-4567"]),
    ("regex_ipv4", "regex", r"((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d)",
     r"((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d)", ["192.168.0.1"], ["256.1.1.1"]),
    ("regex_words", "regex", r"[A-Za-z]+( [A-Za-z]+){0,5}[.!?]", r"[A-Za-z]+( [A-Za-z]+){0,5}[.!?]", ["Hello there world!"], ["hello  world."]),
    ("regex_hex_color", "regex", r"#(?:[0-9a-fA-F]{3}){1,2}", r"#(?:[0-9a-fA-F]{3}){1,2}", ["#fff", "#A0b1C2"], ["#ffff"]),
    ("regex_yes_no", "regex", r"^(yes|no|maybe)$", r"(yes|no|maybe)", ["maybe"], ["yesno"]),
    ("regex_classes", "regex", r"\w+\s\W\d*\S?", r"\w+\s\W\d*\S?", ["ab_1 %12x"], ["ab"]),
    ("regex_lazy_dot", "regex", r"<b>.*?</b>", r"<b>.*?</b>", ["<b>x</b>"], ["<b>x\n</b>"]),
    ("gbnf_yes_no", "gbnf", 'root ::= "yes" | "no"', r"yes|no", ["yes"], ["yes no"]),
    ("gbnf_list", "gbnf", 'root ::= "[" (item ("," item)*)? "]"\nitem ::= [a-z]+', r"\[([a-z]+(,[a-z]+)*)?\]", ["[ab,c]", "[]"], ["[a,]"]),
    ("gbnf_csv", "gbnf", 'root ::= line{1,3}\nline ::= field ("," field)* "\\n"\nfield ::= [^,\\n"]*',
     r"([^,\n\"]*(,[^,\n\"]*)*\n){1,3}", ["a,b\nc\n"], ["a,b"]),
    ("gbnf_balanced", "gbnf", 'root ::= ("(" root ")")*', "balanced", ["(()())()"], ["(()"]),
    ("gbnf_arithmetic", "gbnf",
     'root ::= expr\nexpr ::= term (("+" | "-") term)*\nterm ::= factor (("*" | "/") factor)*\n'
     'factor ::= [0-9]+ | "(" expr ")"', "arithmetic", ["1+2*(3-4)/5"], ["1+", "(1"]),
    ("gbnf_json_like", "gbnf",
     'root ::= value\nvalue ::= object | array | string | number | "true" | "false" | "null"\n'
     'object ::= "{" ( string ":" value ("," string ":" value)* )? "}"\n'
     'array ::= "[" ( value ("," value)* )? "]"\n'
     'string ::= "\\"" [a-z ]* "\\""\nnumber ::= "-"? [0-9]+ ("." [0-9]+)?', "compact_json",
     ['{"a":[1,-2.5,"x y"],"b":null}'], ['{"a":}', "[1,]"]),
    ("gbnf_repetition", "gbnf", 'root ::= [a-c]{2,4} "-" [0-9]{3}', r"[a-c]{2,4}-[0-9]{3}", ["abca-123"], ["a-123"]),
    ("gbnf_unicode", "gbnf", 'root ::= [α-ω]+ " " [^\\x00-\\x7F]', r"[α-ω]+ [^\x00-\x7F]", ["αβγ é"], ["abc é"]),
]
