#!/usr/bin/env python3
"""Builds the tokenizer test corpus: Tests/PhiTextTests/Fixtures/tokenizer/corpus.jsonl.

Deterministic (fixed seeds, no network, no files outside the Python standard library), so
running it again gives the same corpus for the same Python version. One JSON string per line.

What is in it, and why (each is a way tokenizers differ):
  - English prose (standard-library docstrings) and code (standard-library source)
  - hand-written sentences in ~60 languages and scripts (RTL, Indic, CJK, Thai, …)
  - emoji: ZWJ families, skin tones, flags, keycaps, variation selectors
  - combining marks (decomposed accents, stacked "zalgo" marks, Hangul jamo, Indic viramas)
  - whitespace runs: spaces, tabs, newlines, CRLF, exotic Unicode spaces, at every position
  - digits in many scripts and lengths; URLs, e-mail addresses, paths
  - byte-ish strings (`<0xF0>`, `Ġ`, `▁`, U+FFFD, controls, private use, noncharacters)
  - every tokenizer's added tokens inside text, touching words, spaces and newlines
  - the empty string, single characters, random mixtures of all of the above, random
    scalars from many Unicode blocks, and a few long texts (tens of kB)
"""

import inspect
import json
import random
import sys
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "Tests/PhiTextTests/Fixtures/tokenizer/corpus.jsonl"

LANGUAGES = [
    "The quick brown fox jumps over the lazy dog. It's 5 o'clock, isn't it? We'll see; they've gone.",
    "DON'T SHOUT: I'LL HEAR YOU'RE HERE, WE'VE SEEN IT'S TRUE, HE'D KNOW.",
    "Portez ce vieux whisky au juge blond qui fume. L'été, où êtes-vous allés ? «Déjà vu», dit-il.",
    "Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich. Straße, Maß, Fußgänger.",
    "El veloz murciélago hindú comía feliz cardillo y kiwi. ¿Qué tal? ¡Olé! Año, niño, pingüino.",
    "À noite, vovô Kowalsky vê o ímã cair no pé do pinguim queixoso e vovó põe açúcar no chá.",
    "Quel fez sghembo copre davanti. Perché così? Più caffè, per favore; è già là.",
    "Pchnąć w tę łódź jeża lub ośm skrzyń fig. Zażółć gęślą jaźń.",
    "Příliš žluťoučký kůň úpěl ďábelské ódy. Šťastný nový rok!",
    "Árvíztűrő tükörfúrógép. Egészségedre!",
    "Pijamalı hasta yağız şoföre çabucak güvendi. İstanbul, ılık, ığdır.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю. Ёлка, ъ, ь.",
    "Чуєш їх, доцю, га? Кумедна ж ти, прощайся без ґольфів!",
    "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Καλημέρα! Ἀρχὴ ἥμισυ παντός.",
    "ჰოი, ჩემო ლამაზო საქართველო! გამარჯობა.",
    "Բարեւ ձեզ, ինչպե՞ս եք։ Հայաստան",
    "שלום עולם! איך אתה? עברית נכתבת מימין לשמאל, 123 ומספרים.",
    "مرحبا بالعالم! كيف حالك؟ اللغة العربية جميلة، ١٢٣٤٥٦٧٨٩٠.",
    "سلام دنیا! حال شما چطور است؟ ۱۲۳۴۵",
    "ہیلو دنیا! آپ کیسے ہیں؟",
    "नमस्ते दुनिया! आप कैसे हैं? क्षत्रिय, ज्ञान, श्री, द्वार। १२३",
    "নমস্কার বিশ্ব! আপনি কেমন আছেন? ১২৩",
    "வணக்கம் உலகம்! நீங்கள் எப்படி இருக்கிறீர்கள்?",
    "నమస్కారం ప్రపంచం! మీరు ఎలా ఉన్నారు?",
    "ನಮಸ್ಕಾರ ಜಗತ್ತು!",
    "നമസ്കാരം ലോകം!",
    "ਸਤ ਸ੍ਰੀ ਅਕਾਲ ਦੁਨੀਆ!",
    "નમસ્તે દુનિયા!",
    "ආයුබෝවන් ලෝකය!",
    "สวัสดีชาวโลก! คุณสบายดีไหม? ภาษาไทยไม่มีช่องว่างระหว่างคำ",
    "ສະບາຍດີ ໂລກ!",
    "မင်္ဂလာပါ ကမ္ဘာလောက!",
    "សួស្តី​ពិភពលោក!",
    "བཀྲ་ཤིས་བདེ་ལེགས།",
    "你好，世界！今天天气很好。我们一起去吃饭吧？《红楼梦》是一部小说。",
    "繁體中文：臺灣、香港、澳門。龍、體、藝。",
    "こんにちは世界！私は日本語を話します。カタカナ、ひらがな、漢字。ｶﾀｶﾅ（半角）",
    "안녕하세요 세계! 한국어는 재미있습니다. 훈민정음",
    "Xin chào thế giới! Tiếng Việt có nhiều dấu: ắ ằ ẳ ẵ ặ ế ề ể ễ ệ.",
    "Sawubona mhlaba! Unjani?",
    "Habari dunia! Habari yako?",
    "ሰላም ልዑል! እንዴት ነህ?",
    "Ȝe olde ſhoppe: ﬁne ﬂour, Æsir, Œuvre, þorn, ðæt, ŋ, ĳ.",
    "Ὦ ξεῖν᾽, ἀγγέλλειν Λακεδαιμονίοις ὅτι τῇδε κείμεθα.",
    "ᚠᚢᚦᚨᚱᚲ ᛖᛚᛞ — runes; 𐌰𐌱𐌲 — Gothic; 𓀀𓁐 — hieroglyphs.",
    "Mathematical: 𝐀𝐁𝐂 𝑎𝑏𝑐 𝔸𝔹ℂ ∀x∈ℝ: x² ≥ 0, ∑ᵢ aᵢ = ∫₀^∞ f(t) dt ≠ ∞ ± ε.",
    "Ǆemal ǅemal ǆemal — titlecase digraphs; ῼ ᾈ — Greek titlecase.",
    "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ — Cherokee; ᐊᐃᑦ — Inuktitut.",
    "Ꭰ Ꭱ Ꭲ ꭰ ꭱ — Cherokee case.",
    "İi Iı — Turkish dotted and dotless; ß ẞ; ǰ; ŉ.",
]

EMOJI = [
    "👨‍👩‍👧‍👦", "👩🏽‍💻", "🏳️‍🌈", "🏴‍☠️", "🇯🇵🇫🇷🇺🇸", "1️⃣ #️⃣ *️⃣", "❤️ ❤︎ ♥", "👍🏻👍🏼👍🏽👍🏾👍🏿",
    "🧑‍🤝‍🧑", "👁️‍🗨️", "🤖🦄🐉🔥💯", "☺️☹️", "🫠🫶🪿🫎", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "🧔🏻‍♂️", "😀😃😄😁😆😅🤣😂",
]

COMBINING = [
    "e\u0301 a\u0300 o\u0308 n\u0303 c\u0327",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dA\u036b\u0357\u0334\u0362\u0335\u031c\u0330\u0354L\u0368\u0367\u0369\u0358\u0320G\u0311\u0357\u030e\u0305\u035b\u0341\u0334\u033b\u0348\u034d\u0354\u0339O\u0342\u030c\u030c\u0358\u0328\u0335\u0339\u033b\u031d\u0333",
    "\u0301leading mark, \u20dd enclosed, a\u20e3",
    "\u1100\u1161\u11a8 \u1112\u1161\u11ab\u1100\u1173\u11af",  # Hangul jamo
    "क्‍ष क्‌ष",  # ZWJ / ZWNJ in Devanagari
    "Ａ\u0308 ｂ\u0301 — fullwidth with marks",
    "Cafe\u0301 vs Café; Ångström vs A\u030angstro\u0308m",
]

WHITESPACE_PIECES = [" ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2009", "\u200b",
                     "\u2028", "\u2029", "\u0085", "\u1680", "\u202f", "\u205f", "\ufeff", "\x0b", "\x0c"]

URLS = [
    "https://huggingface.co/microsoft/Phi-3.5-mini-instruct/resolve/main/tokenizer.json?download=true",
    "http://example.com:8080/a/b/c.html#frag-ment_1",
    "mailto:someone+tag@example.org", "ftp://ftp.example.net/pub/file.tar.gz",
    "/usr/local/bin/phikit --json > out.txt 2>&1", "C:\\Users\\Name\\Documents\\file (1).txt",
    "user@host:~/src$ git commit -m 'fix: tokenizer'", "https://例え.テスト/パス?キー=値",
    "www.exämple.com/über?q=a%20b&x=1", "<a href=\"/x\">link</a>", "$HOME/.cache/huggingface/hub",
]

DIGITS = [
    "0", "7", "42", "123", "1234", "12345", "1234567890123456789", "3.14159265358979",
    "-0.5e-10", "1,000,000.00", "+1 (555) 123-4567", "2026-11-23T06:49:46Z", "0x1F600", "0b1010",
    "١٢٣٤٥", "۱۲۳", "१२३४", "১২৩", "๑๒๓", "１２３４５", "²³¹⁰", "½ ⅓ ¼", "Ⅻ ⅻ", "①②③",
    "v1.2.3-rc.4", "#123", "100%", "$9.99", "€5,50", "¥1000", "10:30pm",
]

BYTEISH = [
    "<0x41>", "<0xF0><0x9F><0xA4><0x96>", "<0x0A>", "<0xzz>", "<0x+F>", "Ġhello", "▁world",
    "ĊĊ", "âĢĻ", "\ufffd", "\ufffd\ufffd", "\x00", "\x01\x02\x1f", "\x7f", "\x80\x9f",
    "\ue000\uf8ff", "\U000f0000", "\ufdd0", "\uffff", "\U0010fffd", "\u200e\u200f\u202a\u202e",
    "\u2066\u2069", "\u00ad", "\u034f", "\ufe0f", "\U000e0041", "'s 't 're 've 'm 'll 'd", "'S'T'RE",
    "it'ſ", "ǅa", "aǅ", "'", "''", "'''s", "\\n\\t\\\\", "\"quoted\"", "<>", "<<|>>", "|||",
]

SPECIAL = [
    "<s>", "</s>", "<unk>", "<|endoftext|>", "<|assistant|>", "<|end|>", "<|user|>", "<|system|>",
    "<|placeholder1|>", "<|placeholder6|>", "<|tool|>", "<|/tool|>", "<|tool_call|>",
    "<|/tool_call|>", "<|tool_response|>", "<|tag|>", "<|endofprompt|>", "<|endoftext07|>",
]
SPECIAL_NEAR = ["<|user", "<|user|", "|>", "<|", "<|end|>>", "<<|end|>", "<s", "s>", "<|END|>"]


def stdlib_prose():
    import collections, json as j, textwrap, argparse, string, functools, itertools, pathlib
    import email, http.client, unittest, logging, csv, decimal, fractions, heapq, bisect, shutil
    modules = [collections, j, textwrap, argparse, string, functools, itertools, pathlib, email,
               http.client, unittest, logging, csv, decimal, fractions, heapq, bisect, shutil]
    texts = []
    for m in modules:
        doc = inspect.getdoc(m) or ""
        texts += [p for p in doc.split("\n\n") if p.strip()]
        for name, obj in sorted(vars(m).items()):
            if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj)):
                d = inspect.getdoc(obj)
                if d and len(texts) < 2000:
                    texts.append(d)
    return texts


def stdlib_code():
    import textwrap, heapq, bisect, fractions, string, csv, colorsys, calendar
    chunks = []
    for m in [textwrap, heapq, bisect, fractions, string, csv, colorsys, calendar]:
        src = inspect.getsource(m)
        for i in range(0, len(src), 1500):
            chunks.append(src[i:i + 1500])
    chunks.append('{"key": [1, 2.5, -3e10, true, null], "nested": {"a": "b\\n"}}')
    chunks.append("func encode(_ text: String) -> [Int] {\n\tlet ids = text.utf8.map { Int($0) }\n\treturn ids  // ok\n}\n")
    chunks.append("#include <stdio.h>\nint main(void) {\n    printf(\"%d\\n\", 42);\n    return 0;\n}\n")
    chunks.append("SELECT id, name FROM users WHERE age >= 18 AND name LIKE '%son' ORDER BY id DESC;")
    chunks.append("<!DOCTYPE html>\n<html><body><p class=\"x\">Hi &amp; bye</p></body></html>")
    return chunks


def random_scalars(rng, n):
    blocks = [(0x20, 0x7E), (0xA0, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x5FF),
              (0x600, 0x6FF), (0x900, 0x97F), (0xE00, 0xE7F), (0x1100, 0x11FF), (0x2000, 0x206F),
              (0x2190, 0x23FF), (0x2500, 0x27BF), (0x3040, 0x30FF), (0x4E00, 0x9FFF),
              (0xAC00, 0xD7A3), (0xFF00, 0xFFEF), (0x1D400, 0x1D7FF), (0x1F300, 0x1F5FF),
              (0x1F600, 0x1F64F), (0x1F900, 0x1F9FF), (0x300, 0x36F)]
    out = []
    while len(out) < n:
        lo, hi = rng.choice(blocks)
        c = chr(rng.randint(lo, hi))
        # Only characters assigned in Unicode 9 or earlier: younger ones may be classified
        # differently by Oniguruma's and Swift's Unicode tables.
        if unicodedata.category(c) != "Cn" and (0xD800 > ord(c) or ord(c) > 0xDFFF):
            if unicodedata.ucd_3_2_0.category(c) != "Cn" or ord(c) >= 0x1F300:
                out.append(c)
    return "".join(out)


def main():
    rng = random.Random(20261123)
    texts = ["", " ", "  ", "\n", "\t", "a", "A", "hello", "Hello world", " Hello world",
             "  leading spaces", "trailing spaces   ", "emoji 🤖 and 日本語"]
    texts += [chr(c) for c in range(0x20, 0x7F)]
    texts += [chr(c) for c in range(0x00, 0x20)]
    prose = stdlib_prose()
    code = stdlib_code()
    texts += prose[:400]
    texts += code
    texts += LANGUAGES + EMOJI + COMBINING + URLS + DIGITS + BYTEISH
    texts += [unicodedata.normalize("NFD", t) for t in LANGUAGES[:15]]
    # Whitespace runs in every position.
    for n in [1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 64, 100, 257]:
        for ws in [" ", "\t", "\n", "\r\n", " \n", "\n ", "\u00a0", "\u3000"]:
            texts.append(ws * n)
            texts.append("word" + ws * n + "word")
            texts.append(ws * n + "x")
            texts.append("x" + ws * n)
    # Special tokens in context.
    contexts = ["{t}", "a{t}b", "a {t} b", " {t} ", "{t}\n", "{t}\n\nHi", "\n{t}\n", "{t}{t}",
                "x  \t{t}  \n y", "{t}Hello", "Hello{t}", "word{t}word", "🤖{t}🤖", "{t} \n \n",
                "  {t}", "1{t}2", "日本{t}語", "{t}<|user|>\nHi<|end|>\n<|assistant|>\n"]
    for t in SPECIAL + SPECIAL_NEAR:
        for c in contexts:
            texts.append(c.format(t=t))
    texts.append("<|system|>\nYou are helpful.<|end|>\n<|user|>\nWhat's 2+2?<|end|>\n<|assistant|>\n4<|end|>\n<|endoftext|>")
    texts.append("<s>[INST] Hello [/INST] Hi</s><s>[INST] Again [/INST]")
    # Random mixtures of all fragments.
    pools = [prose, code, LANGUAGES, EMOJI, COMBINING, URLS, DIGITS, BYTEISH, SPECIAL,
             SPECIAL_NEAR, WHITESPACE_PIECES]
    for _ in range(1500):
        parts = []
        for _ in range(rng.randint(1, 8)):
            pool = rng.choice(pools)
            frag = rng.choice(pool)
            if len(frag) > 300:
                start = rng.randint(0, len(frag) - 300)
                frag = frag[start:start + rng.randint(1, 300)]
            parts.append(frag)
            parts.append(rng.choice(["", "", " ", "  ", "\n", "\t", "\n\n", " \n ", rng.choice(WHITESPACE_PIECES)]))
        texts.append("".join(parts))
    for _ in range(200):
        texts.append(random_scalars(rng, rng.randint(1, 80)))
    # A few long texts.
    texts.append("\n\n".join(prose[:60]))
    texts.append("".join(code[:20]))
    texts.append(" ".join(LANGUAGES * 8))
    texts.append(("word " * 3000) + ("  " * 500) + ("\n" * 300))
    texts.append("".join(EMOJI) * 20)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        for t in texts:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    total = sum(len(t.encode()) for t in texts)
    print(f"{OUT}: {len(texts)} texts, {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
