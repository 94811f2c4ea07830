#!/usr/bin/env python3
"""Golden outputs of small Jinja snippets in transformers' chat-template environment.

Each snippet exercises one part of the interpreter (whitespace control, literals, operators,
filters, tests, loops, scoping, macros, string methods, tojson, error lines). They are
compiled exactly as apply_chat_template compiles templates
(transformers.utils.chat_template_utils._compile_jinja_template: ImmutableSandboxedEnvironment,
trim_blocks, lstrip_blocks, loopcontrols, transformers' tojson/raise_exception/strftime_now/
namespace/dict) and rendered with the context given. Writes
Tests/PhiTextTests/Fixtures/chat_template/snippets.json with, per snippet, the output or the
error: "raised" (raise_exception), "syntax" (with Jinja's line), or "error" (with the template
line the traceback points at, when there is one).

    /work/venv/bin/python scripts/chat_template/make_snippet_golden.py
"""

import json
import os
import sys
import traceback

import jinja2
from transformers.utils import chat_template_utils

from reference_env import FIXTURES, NOW, pin_clock

OUT = os.path.join(FIXTURES, "snippets.json")
pin_clock()

CONTEXT = {
    "d": {"a": 1, "b": [2, 3], "c": {"x": "y"}, "items": "shadowed"},
    "msgs": [
        {"role": "system", "content": "  sys  "},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo", "n": 2},
        {"role": "user", "content": "bye"},
    ],
    "nums": [3, 1, 2, 5, 4],
    "words": ["banana", "Apple", "cherry", "apple"],
    "text": "Hello, World! The quick brown fox.",
    "nothing": None,
    "flag": True,
    "f": 2.5,
    "uni": "héllo 🤖 日本",
}

SNIPPETS = [
    # --- whitespace control, trim_blocks / lstrip_blocks -------------------------------------
    "a  {%- if true %} b {% endif -%}  c",
    "  {% if true %}\n    x\n  {% endif %}\ny",
    "{% for i in [1, 2] %}\n  {{ i }}\n{% endfor %}\nend",
    "a\n  {#- comment -#}\n  b",
    "a {# c #}\nb\n{# whole line #}\nc",
    "x {%+ if true %}y{% endif %}",
    "  {%+ if true %}y{% endif %}",
    "{% if true +%}\nz{% endif %}",
    "[{{- ' a ' -}}]",
    "  {{ 'v' }}  \n  w",
    "text\n\n",
    "text\n",
    "line1\r\nline2\rline3\n",
    "{% raw %}{{ not }} {% if %}{% endraw %}",
    "  {% raw -%}  x  {%- endraw %}  after",
    "    {% set x = 1 %}\n{{ x }}",
    "{{ 'a\r\nb' }}",
    "a\t{% if true -%}\n\n\tb{%- endif %}\n",
    "{%- for m in msgs -%}\n  {{ m.role }}\n{%- endfor %}",
    "{% if true %}  {% endif %}|",
    "<{% if true %}\n{% endif %}>",
    "{{ {'a': {'b': 1}} }}",
    "{{ 1 }}{{ {'x': 2}['x'] }}}}",
    # --- literals and printing -------------------------------------------------------------
    "{{ [1, 'two', 3.0, none, true, false] }}|{{ (1, 2) }}|{{ (1,) }}|{{ () }}|{{ {'a': 1, 2: 'b'} }}|{{ {} }}|{{ [] }}",
    "{{ [\"it's\", 'say \"hi\"', 'both \\' \"', 'nl\\n', 'é', '\\x00', '\\u2028', '\\t\\r', '\\\\'] }}",
    "{{ 'a\\tb\\nc' }}|{{ \"it's\" }}|{{ 'x' 'y' \"z\" }}|{{ '\\u00e9\\x41\\101\\U0001F600' }}|{{ 'keep \\d \\q' }}",
    "{{ 42 }}|{{ 0x1F }}|{{ 0o17 }}|{{ 0b101 }}|{{ 1_000 }}|{{ 1.5 }}|{{ 1e3 }}|{{ 2.5e-3 }}|{{ 1_0.5 }}",
    "{{ 0.1 + 0.2 }}|{{ 1e20 }}|{{ 1e16 }}|{{ 1e15 }}|{{ 1.0 }}|{{ 3.0 * 2 }}|{{ 10 / 4 }}|{{ 1e-7 }}|{{ 0.0001 }}|{{ -0.0 }}",
    "{{ true }}|{{ True }}|{{ false }}|{{ none }}|{{ None }}|{{ nothing }}|{{ flag }}|{{ f }}",
    "{{ uni }}|{{ uni | length }}|{{ uni[6] }}|{{ uni[-1] }}|{{ uni | reverse }}",
    # --- operators -------------------------------------------------------------------------
    "{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ 7 % 3 }}|{{ -7 % 3 }}|{{ 7 % -3 }}|{{ 7 / 2 }}|{{ 2 ** 3 ** 2 }}|{{ -2 ** 2 }}|{{ 2 ** -1 }}",
    "{{ 7.5 // 2 }}|{{ -7.5 // 2 }}|{{ 7.5 % 2 }}|{{ -7.5 % 2 }}|{{ 1 + 1.5 }}|{{ true + 1 }}|{{ 10 - true }}",
    "{{ 'ab' ~ 1 ~ none ~ true ~ 1.5 ~ [1] }}|{{ 'ab' + 'cd' }}|{{ 'ab' * 3 }}|{{ 2 * 'xy' }}|{{ [1] + [2] }}|{{ [0] * 3 }}|{{ (1,) + (2,) }}",
    "{{ 1 < 2 < 3 }}|{{ 3 > 2 > 2 }}|{{ 'a' < 'b' }}|{{ 'B' < 'a' }}|{{ [1, 2] < [1, 3] }}|{{ 1 == 1.0 }}|{{ 'a' != 'b' }}|{{ none == none }}|{{ 1 <= 1 >= 0 }}",
    "{{ 'a' in 'abc' }}|{{ '' in 'abc' }}|{{ 2 in [1, 2] }}|{{ 'k' in {'k': 1} }}|{{ 3 not in [1] }}|{{ 'x' not in 'y' }}|{{ 1 in (1, 2) }}|{{ true in [1] }}",
    "{{ 0 or 'x' }}|{{ 1 and 'y' }}|{{ none or [] }}|{{ not '' }}|{{ not not 1 }}|{{ 'a' if false else 'b' }}|[{{ 'c' if false }}]|{{ 1 if 0 else 2 if 0 else 3 }}",
    "{{ d == {'items': 'shadowed', 'c': {'x': 'y'}, 'b': [2, 3], 'a': 1} }}|{{ [1, [2]] == [1, [2]] }}|{{ (1, 2) == [1, 2] }}|{{ 1 == true }}|{{ 0 == false }}|{{ '1' == 1 }}",
    "{{ -f }}|{{ +3 }}|{{ -(1 + 2) }}|{{ - 2 | abs }}|{{ not flag }}",
    "{{ '%s and %d' % ('a', 3) }}|{{ '%s' % 'solo' }}|{{ '%r' % 'q' }}|{{ '%.2f' % 3.14159 }}|{{ '100%%' % () }}|{{ '%(x)s!' % {'x': 'hey'} }}",
    # --- variables, attributes, items, slicing ---------------------------------------------
    "{{ d.a }}|{{ d['a'] }}|{{ d.b[1] }}|{{ d.c.x }}|{{ d['c']['x'] }}|{{ d.items is callable }}|{{ d['items'] }}|{{ d.missing }}|{{ d['missing'] }}|{{ msgs[0].role }}|{{ msgs.0.role }}",
    "{{ nums[1:3] }}|{{ nums[::2] }}|{{ nums[::-1] }}|{{ text[7:12] }}|{{ text[-4:] }}|{{ nums[10:] }}|{{ 'abc'[::-2] }}|{{ nums[-1:0:-1] }}|{{ nums[:-2] }}|{{ nums[-100:2] }}",
    "{{ nums[-1] }}|{{ nums[99] }}|{{ 'abc'[0] }}|{{ 'abc'[5] }}|{{ (1, 2).1 }}|{{ nothing.attr }}|{{ 5.attr }}|{{ 'abc'.nope }}|{{ nums.count(3) }}|{{ nums.index(2) }}",
    "{{ missing }}|{{ missing is defined }}|{{ missing is undefined }}|{{ missing | default('d') }}|{{ nothing | default('d') }}|{{ '' | default('d', true) }}|{{ missing | d('x') }}|{{ missing | length }}|{{ missing ~ 'x' }}|{% for x in missing %}no{% endfor %}|{{ not missing }}|{{ missing | string }}|{{ missing | list }}|{{ missing | join(',') }}|{{ missing | upper }}|{{ missing | items | list }}",
    "{{ missing.attr }}",
    "{{ missing + 1 }}",
    "{{ missing['k'] }}",
    "{{ missing() }}",
    "{{ nothing.a.b }}",
    "{{ d.missing.deeper }}",
    "{{ msgs.append(1) }}",
    "[{{ msgs.append }}]",
    "{{ d.update({}) }}",
    "{{ d.__class__ }}",
    # --- control flow and loops --------------------------------------------------------------
    "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}{{ loop.nextitem }};{% endfor %}",
    "{% for x in nums if x > 2 %}{{ x }}:{{ loop.index }}/{{ loop.length }} {% else %}none{% endfor %}|{% for x in [] %}{% else %}empty{% endfor %}|{% for x in nums if x > 10 %}{% else %}filtered-out{% endfor %}",
    "{% for i in range(10) %}{% if i == 7 %}{% break %}{% endif %}{% if i is odd %}{% continue %}{% endif %}{{ i }}{% endfor %}",
    "{% for k, v in d.items() %}{{ k }}={{ v }},{% endfor %}|{% for k in d %}{{ k }}{% endfor %}|{% for a, (b, c) in [[1, [2, 3]]] %}{{ a }}{{ b }}{{ c }}{% endfor %}|{% for k, v in d | items %}{{ k }}{% endfor %}",
    "{% for x in [1, 2, 3] %}{{ loop.cycle('a', 'b') }}{{ loop.changed(x > 1) }}{% endfor %}",
    "{% for row in [[1, 2], [3]] %}{% for c in row %}{{ loop.index }}{{ c }}{% endfor %}/{{ loop.index }};{% endfor %}",
    "{% for n in [{'v': 1, 'kids': [{'v': 2, 'kids': []}]}] recursive %}{{ n.v }}({{ loop.depth }}){% if n.kids %}[{{ loop(n.kids) }}]{% endif %}{% endfor %}",
    "{% if 0 %}a{% elif '' %}b{% elif [] %}c{% elif 'x' %}d{% else %}e{% endif %}|{% if none %}n{% else %}else{% endif %}|{% if 1, 2 %}tuple{% endif %}",
    "{% set count = 0 %}{% for i in range(3) %}{{ count }}{% set count = count + 1 %}{{ count }},{% endfor %}{{ count }}",
    "{% for i in range(3) %}{% if i == 1 %}{% set y = 5 %}{% endif %}[{{ y }}]{% endfor %}[{{ y }}]",
    "{% if true %}{% set z = 3 %}{% endif %}{{ z }}",
    "{% set a, b = 1, 2 %}{{ a }}{{ b }}|{% set t = 1, 2 %}{{ t }}|{% set (p, q) = 'xy' %}{{ q }}{{ p }}",
    "{% set x = y = 1 %}",
    "{% set ns = namespace(total=0, seen=[]) %}{% for n in nums %}{% set ns.total = ns.total + n %}{% endfor %}{{ ns.total }}|{{ ns.seen }}|{{ ns.missing }}|{{ ns.missing is defined }}|{{ ns }}",
    "{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}|{% set ns2 = namespace() %}{% set ns2.x = 'set' %}{{ ns2.x }}",
    "{% set ns = namespace(_hidden=1) %}",
    "{% set x = 5 %}{% set x.attr = 1 %}",
    "{% set block %}  a {{ 1 + 1 }}\n{% endset %}[{{ block }}]|{% set up | upper | trim %} abc {% endset %}[{{ up }}]",
    "{% with a = 1, b = 'two' %}{{ a }}{{ b }}{% set c = 3 %}{% endwith %}[{{ a }}{{ c }}]",
    "{% filter upper %}abc{{ 'd' }}{% endfilter %}|{% filter trim | title %}  hello world  {% endfilter %}",
    "{% generation %}gen{{ 1 }}{% endgeneration %}",
    # --- macros --------------------------------------------------------------------------------
    "{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet('Ann') }}|{{ greet('Bo', 'Hi') }}|{{ greet(greeting='Yo', name='Cy') }}|{{ greet() }}",
    "{% macro f(a) %}[{{ a }}|{{ varargs }}|{{ kwargs }}]{% endmacro %}{{ f(1, 2, 3, k=4) }}",
    "{% macro f(a) %}{{ a }}{% endmacro %}{{ f(1, 2) }}",
    "{% macro f(a) %}{{ a }}{% endmacro %}{{ f(1, b=2) }}",
    "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1) | int }}{% endif %}{% endmacro %}{{ fact(5) }}",
    "{% set x = 1 %}{% macro m() %}{{ x }}{% endmacro %}{% set x = 2 %}{{ m() }}",
    "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}bold {{ 1 }}{% endcall %}|{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(v) each([1, 2]) %}<{{ v }}>{% endcall %}",
    "{% macro m() %}  spaced  {% endmacro %}[{{ m() }}]|{{ m() | trim }}|{{ m() ~ '!' }}|{{ m() == '  spaced  ' }}",
    # --- filters -------------------------------------------------------------------------------
    "{{ '  a b  ' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ text | lower }}|{{ text | upper }}|{{ 'hello  WORLD-foo(bar' | title }}|{{ \"o'neil mc-d\" | title }}|{{ 'hELLO' | capitalize }}|{{ 'ǆemal' | title }}",
    "{{ nums | length }}|{{ nums | count }}|{{ text | length }}|{{ d | length }}|{{ nums | first }}|{{ nums | last }}|{{ [] | first }}|{{ 'abc' | first }}|{{ 'ab' | list }}|{{ d | list }}|{{ nums | sum }}|{{ nums | min }}|{{ nums | max }}",
    "{{ nums | sort }}|{{ nums | sort(reverse=true) }}|{{ words | sort }}|{{ words | sort(case_sensitive=true) }}|{{ msgs | sort(attribute='role') | map(attribute='content') | list }}|{{ words | unique | list }}|{{ words | unique(case_sensitive=true) | list }}|{{ words | min }}|{{ words | max }}",
    "{{ nums | join }}|{{ nums | join(', ') }}|{{ ['a', none, 3] | join('-') }}|{{ msgs | join(' ', attribute='role') }}|{{ nums | reverse | list }}|{{ 'abc' | reverse }}|{{ [1.5, 2] | sum }}|{{ msgs[2:3] | sum(attribute='n', start=10) }}",
    "{{ msgs | sum(attribute='n') }}",
    "{{ msgs | map(attribute='role') | list }}|{{ msgs | map(attribute='n', default=0) | list }}|{{ msgs | map(attribute='n') | list }}|{{ words | map('upper') | list }}|{{ words | map('replace', 'a', 'A') | list }}|{{ [[1, 2]] | map(attribute='1') | list }}",
    "{{ nums | select('odd') | list }}|{{ nums | reject('odd') | list }}|{{ nums | select('greaterthan', 2) | list }}|{{ nums | select('>', 3) | list }}|{{ [0, 1, '', 'a', none] | select | list }}|{{ nums | reject('equalto', 2) | list }}|{{ nums | select('in', [1, 5]) | list }}",
    "{{ msgs | selectattr('role', 'equalto', 'user') | map(attribute='content') | list }}|{{ msgs | rejectattr('role', 'eq', 'user') | list | length }}|{{ msgs | selectattr('n') | list }}|{{ msgs | selectattr('n', 'defined') | list | length }}|{{ msgs | rejectattr('n', 'undefined') | list | length }}",
    "{{ d | items | list }}|{{ {'b': 1, 'A': 2, 'a': 3} | dictsort }}|{{ {'b': 1, 'a': 2} | dictsort(by='value', reverse=true) }}|{{ nums | batch(2) | list }}|{{ nums | batch(2, 0) | list }}",
    "{{ 'a-b-c' | replace('-', '+') }}|{{ 'a-b-c' | replace('-', '+', 1) }}|{{ 'ab' | replace('', '.') }}|{{ 3 | string }}|{{ nothing | string }}|{{ [1] | string }}|{{ 'x' | safe }}|{{ '<a href=\"x\">&\\'</a>' | e }}|{{ '<b>' | escape }}",
    "{{ 'line1\\nline2\\n\\nline4' | indent }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent('> ', blank=true) }}|{{ 'single' | indent(first=true) }}",
    "{{ 42.9 | int }}|{{ '  12  ' | int }}|{{ '1_000' | int }}|{{ '0x1A' | int(base=16) }}|{{ '3.7' | int }}|{{ 'abc' | int }}|{{ 'abc' | int(-1) }}|{{ true | int }}|{{ '12' | float }}|{{ 'x' | float }}|{{ '1e3' | float }}|{{ 3 | float }}",
    "{{ 1.5 | round }}|{{ 2.5 | round }}|{{ 2.675 | round(2) }}|{{ 3 | round }}|{{ -2.5 | round }}|{{ 2.4 | round(0, 'ceil') }}|{{ 2.6 | round(1, 'floor') }}|{{ -7 | abs }}|{{ -1.5 | abs }}",
    "{{ 'a b  c' | wordcount }}|{{ 'ab' | center(6) }}|{{ 'abc' | center(6) }}|{{ 'x' | center(5) }}|{{ text | truncate(12) }}|{{ text | truncate(12, true) }}|{{ text | truncate(12, false, '~', 0) }}|{{ 'short' | truncate(10) }}",
    "{{ '%s-%s' | format(1, 'b') }}|{{ '%(a)s' | format(a='kw') }}|{{ d | attr('a') }}|{{ msgs | first | attr('role') }}",
    # --- tojson (transformers' own: ensure_ascii=False, no HTML escaping) -----------------------
    "{{ d | tojson }}|{{ msgs[2] | tojson }}|{{ [1, 2.5, none, true, 'é', '</script>'] | tojson }}|{{ (1, 2) | tojson }}|{{ '\\x01\\u2028\\t\"\\\\' | tojson }}|{{ {} | tojson }}|{{ [] | tojson(indent=2) }}",
    "{{ d | tojson(indent=2) }}",
    "{{ d | tojson(indent='\\t', sort_keys=true) }}",
    "{{ {'b': 1, 'a': [1, {'c': none}]} | tojson(separators=(',', ':')) }}|{{ {1: 'int', 2.5: 'float', true: 'bool', none: 'none'} | tojson }}|{{ uni | tojson(ensure_ascii=true) }}",
    "{{ missing | tojson }}",
    "{{ namespace(a=1) | tojson }}",
    # --- tests -----------------------------------------------------------------------------------
    "{{ nothing is none }}|{{ 0 is none }}|{{ d is mapping }}|{{ nums is mapping }}|{{ nums is sequence }}|{{ 'a' is iterable }}|{{ 5 is iterable }}|{{ d is iterable }}|{{ missing is iterable }}|{{ missing is sequence }}",
    "{{ 1 is number }}|{{ 1.5 is number }}|{{ true is number }}|{{ 1 is integer }}|{{ true is integer }}|{{ 1.0 is integer }}|{{ 1.0 is float }}|{{ true is boolean }}|{{ 1 is boolean }}|{{ true is true }}|{{ 1 is true }}|{{ false is false }}|{{ 'x' is string }}|{{ 1 is string }}",
    "{{ 3 is odd }}|{{ 4 is even }}|{{ 9 is divisibleby 3 }}|{{ 9 is divisibleby(4) }}|{{ 1 is sameas true }}|{{ true is sameas true }}|{{ nothing is sameas none }}|{{ 2 is eq 2 }}|{{ 2 is equalto 3 }}|{{ 2 is ne 3 }}|{{ 2 is lt 3 }}|{{ 2 is le 2 }}|{{ 2 is gt 1 }}|{{ 2 is ge 3 }}|{{ 2 is in [1, 2] }}|{{ 'a' is in 'cat' }}",
    "{{ 'abc' is lower }}|{{ 'ABC' is upper }}|{{ '1' is lower }}|{{ 'aB' is lower }}|{{ 'upper' is filter }}|{{ 'nope' is filter }}|{{ 'odd' is test }}|{{ range is callable }}|{{ 1 is callable }}|{{ d is not none }}|{{ d.a is not string }}|{{ missing is not defined }}",
    # --- string methods ------------------------------------------------------------------------------
    "[{{ '  x  '.strip() }}|{{ '  x  '.lstrip() }}|{{ '  x  '.rstrip() }}|{{ 'xxaxx'.strip('x') }}|{{ '\\n\\t y \\u3000'.strip() }}|{{ 'ab'.lstrip('ba') }}]",
    "{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a b c'.rsplit(' ', 1) }}|{{ '  a b c  '.split(none, 1) }}|{{ '  a b c  '.rsplit(none, 1) }}|{{ 'a\\nb\\r\\nc\\rd'.splitlines() }}|{{ 'x\\ny\\n'.splitlines(true) }}|{{ ''.split(',') }}|{{ ''.split() }}",
    "{{ text.startswith('Hello') }}|{{ text.startswith(('x', 'Hel')) }}|{{ text.endswith('.') }}|{{ text.endswith(('a', 'b')) }}|{{ text.find('o') }}|{{ text.rfind('o') }}|{{ text.find('zz') }}|{{ text.count('o') }}|{{ 'aaa'.count('aa') }}|{{ 'aaa'.rfind('aa') }}",
    "{{ text.replace('o', '0') }}|{{ text.replace('o', '0', 2) }}|{{ 'ab'.replace('', '-') }}|{{ ', '.join(words) }}|{{ ''.join(['a', 'b']) }}|{{ text.upper() }}|{{ text.lower() }}|{{ \"they're bob's x2y\".title() }}|{{ 'hELLO wORLD'.capitalize() }}|{{ 'straße'.upper() }}",
    "{{ '{} and {}'.format(1, 'b') }}|{{ '{1}{0}'.format('a', 'b') }}|{{ '{name}!'.format(name='x') }}|{{ '{{literal}} {}'.format(3) }}|{{ '{:>5}|{:<4}|{:^5}|{:.2f}'.format('r', 'l', 'c', 3.14159) }}|{{ '{0[1]} {0[0]}'.format(['a', 'b']) }}|{{ '{!r}'.format('q') }}",
    "{{ '123'.isdigit() }}|{{ '12a'.isdigit() }}|{{ 'abc'.isalpha() }}|{{ 'ab1'.isalnum() }}|{{ '  '.isspace() }}|{{ 'abc'.islower() }}|{{ 'ABC'.isupper() }}|{{ ''.isdigit() }}",
    "{{ ', '.join(nums) }}",
    # --- globals ---------------------------------------------------------------------------------------
    "{{ range(3) | list }}|{{ range(1, 10, 3) | list }}|{{ range(5, 0, -2) | list }}|{{ range(0) | list }}|{% for i in range(2) %}{{ i }}{% endfor %}|{{ dict(a=1, b='x') }}|{{ dict([('k', 'v')]) }}|{{ dict({'a': 1}, c=3) }}",
    "{% set pipe = joiner(' | ') %}{% for x in nums %}{{ pipe() }}{{ x }}{% endfor %}|{% set comma = joiner() %}{{ comma() }}{{ comma() }}{{ comma() }}",
    "{{ strftime_now('%Y-%m-%d %H:%M:%S') }}|{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%B %d, %Y') }}|{{ strftime_now('%a %A %j %p %I %y %m %%') }}",
    "{{ raise_exception('boom: ' ~ 1) }}",
    "ok\n{% if true %}\n{{ raise_exception('on line three') }}\n{% endif %}",
    "{{ range(100001) | length }}",
    # --- runtime errors with lines ----------------------------------------------------------------------
    "line1\nline2 {{ 1 + 'a' }}",
    "a\n{% for x in 5 %}{% endfor %}",
    "{% set x = [1] %}\n\n{{ x.append(2) }}",
    "{{ 1 / 0 }}",
    "{{ 1 // 0 }}",
    "{{ 'a' < 1 }}",
    "{{ -'x' }}",
    "{{ 'abc'.split('') }}",
    "{{ [1] | items | list }}",
    "{{ 5() }}",
    "{{ ', '.join([1]) }}",
    "{% set a, b = [1, 2, 3] %}",
    "{{ {[1]: 2} }}",
    # --- syntax errors ---------------------------------------------------------------------------------
    "{% if x %}\nno end",
    "line1\n{{ 1 + }}",
    "{% foo %}",
    "a\n\n{{ x | nosuchfilter }}",
    "{{ x is nosuchtest }}",
    "{% for x in y %}{% endif %}",
    "{{ 'unterminated }}",
    "{% set %}",
    "{% macro m(a=1, b) %}{% endmacro %}",
    "{{ {'a': 1 }}",
    "x\n{# unclosed comment",
    "{% raw %} no end",
    "{% endfor %}",
    "{% break %}",
    "{{ 1 2 }}",
    "{{ ) }}",
    "{% set 1 = 2 %}",
    "{% set true = 2 %}",
    "{{ x is defined is defined }}",
    "{{ a.(b) }}",
    "{% for %}{% endfor %}",
    "{{ 'a' !x }}",
    "{% include 'other.jinja' %}",
    "{% extends 'base' %}",
]


def template_line(tb):
    """The template line a runtime error's traceback points at (Jinja rewrites frames)."""
    line = None
    for frame in traceback.extract_tb(tb):
        if frame.filename == "<template>":
            line = frame.lineno
    return line


def run(source):
    try:
        compiled = chat_template_utils._compile_jinja_template(source)
    except jinja2.exceptions.TemplateSyntaxError as e:
        return {"syntax": e.lineno, "message": e.message}
    except SyntaxError as e:  # Python rejects the compiled code ('break' outside loop)
        return {"syntax": None, "message": str(e)}
    try:
        return {"expected": compiled.render(**CONTEXT)}
    except jinja2.exceptions.TemplateError as e:
        if type(e) is jinja2.exceptions.TemplateError:
            return {"raised": str(e), "line": template_line(e.__traceback__)}
        return {"error": f"{type(e).__name__}: {e}", "line": template_line(e.__traceback__)}
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}", "line": template_line(e.__traceback__)}


def main():
    snippets = []
    for source in SNIPPETS:
        snippets.append({"template": source, **run(source)})
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"generator": "scripts/chat_template/make_snippet_golden.py", "jinja2": jinja2.__version__,
                   "now": NOW.isoformat(), "context": CONTEXT, "snippets": snippets},
                  f, ensure_ascii=False, indent=1)
        f.write("\n")
    kinds = {}
    for s in snippets:
        kind = next(k for k in ("expected", "raised", "syntax", "error") if k in s)
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"{len(snippets)} snippets: {kinds}", file=sys.stderr)


if __name__ == "__main__":
    main()
