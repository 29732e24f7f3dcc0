#!/usr/bin/env python3
"""Every quotation of the four documents the model implements is one the document has.

The documents (Native GPU fence object; Supporting cross-adapter resource scan-out (CASO); Allocation
notification; TDR in Windows 8 and later) are cited by title throughout the guide and in parameter
sources, with a section in single quotes ('Log buffer mechanism') or a passage in single or double
quotes. tests/docs/documents.json holds, per document, its title and the names the guide uses for it,
the headings it has and the passages of it the guide quotes, each copied from the document. This check
reads README.md and every page under docs/ (the parameter tables included: they are the binary's
sources) and, for each quotation attributed to a document, requires that it is one of that document's
headings or lies within one of its passages:
  * a quotation is attributed to the document named last before it in its paragraph (or table row),
    when no sentence ends between the name and the quotation; "the document(s)" names the page's
    last-named document (the documents: any of them);
  * a passage may be quoted in part, its first letter's case changed, and with " ... " for what it
    leaves out (each part found in order); whitespace and typographic quotes do not count.
A quotation the list lacks fails with the page and line: copy the passage from the document into
documents.json (or fix the quotation). With --document TITLE=FILE (a text of the document, e.g. the
published page saved as text), the list itself is checked against the document: every heading a line
of it and every passage in it.

usage: check_quotes.py [--root DIR] [--document TITLE=FILE ...] [--list]
Exit: 0 every quotation found, 1 a quotation or a listed passage not found, 2 bad input.
"""
import argparse
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def norm(text):
    """Whitespace collapsed, typographic quotes and dashes plain, Markdown emphasis and links dropped."""
    t = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    t = t.replace("\u2014", "-").replace("\u2013", "-").replace("\u2026", "...")
    t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", t)  # [text](link)
    t = t.replace("**", "").replace("`", "")
    return re.sub(r"\s+", " ", t).strip()


def find_words(text, part, at):
    """Where `part` lies in `text` from `at` on, whole words at both ends (a word cut in two is no quotation)."""
    i = text.find(part, at)
    while i >= 0:
        j = i + len(part)
        if (i == 0 or not (part[0].isalnum() and text[i - 1].isalnum())) and \
                (j == len(text) or not (part[-1].isalnum() and text[j].isalnum())):
            return i
        i = text.find(part, i + 1)
    return -1


def found_in(quote, passages):
    """The quotation, in parts split at '...', lies in order within one passage (first letter's case free)."""
    parts = [p.strip(" ,;:") for p in re.split(r"\s*\.\.\.\s*", norm(quote)) if p.strip(" ,;:")]
    if not parts:
        return True
    for passage in passages:
        text, at, ok = norm(passage), 0, True
        for part in parts:
            i = find_words(text, part, at)
            if i < 0 and part[:1].isalpha():
                flipped = (part[0].lower() if part[0].isupper() else part[0].upper()) + part[1:]
                i = find_words(text, flipped, at)
            if i < 0:
                ok = False
                break
            at = i + len(part)
        if ok:
            return True
    return False


def load_registry(path):
    try:
        with open(path, encoding="utf-8") as f:
            reg = json.load(f)
        docs = reg["documents"]
        for d in docs:
            for key in ("title", "names", "headings", "passages", "source"):
                if key not in d:
                    raise KeyError(f"a document without '{key}'")
        return docs
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"check_quotes: cannot read {path}: {e}")
        sys.exit(2)


# A quotation: in double quotes, or in single quotes that are not apostrophes (no word character on
# their outer side).
QUOTE = re.compile(r'"([^"\n]{3,600}?)"|(?<![\w\'])\'([^\'\n]{3,600}?)\'(?![\w])')
SENTENCE_END = re.compile(r"[.!?](\s|$)")


def chunks(text):
    """Paragraphs, and each table row on its own, with the line each starts on."""
    line, buf, start = 1, [], 1
    for raw in text.split("\n"):
        if raw.startswith("|") or not raw.strip():
            if buf:
                yield start, "\n".join(buf)
                buf = []
            if raw.startswith("|"):
                yield line, raw
        else:
            if not buf:
                start = line
            buf.append(raw)
        line += 1
    if buf:
        yield start, "\n".join(buf)


def attributions(text, docs):
    """(line, document or None for 'the documents', quotation) for each quotation attributed to a document."""
    names = []
    for d in docs:
        for n in [d["title"]] + d["names"]:
            names.append((n, d))
    names.sort(key=lambda x: -len(x[0]))
    # A name may break across lines (and, in emphasis, carry its asterisks): words joined by any whitespace.
    name_re = re.compile("|".join(r"\s+".join(re.escape(w) for w in n.split()) for n, _ in names), re.I)
    the_doc = re.compile(r"\bthe documents?\b(?!\s+(?:format|id))", re.I)
    by_lower = {n.lower(): d for n, d in names}
    key = lambda text: re.sub(r"\s+", " ", text).lower()
    page_last = None
    out = []
    for line, chunk in chunks(text):
        refs = []  # (end offset, document or "all")
        for m in name_re.finditer(chunk):
            refs.append((m.end(), by_lower[key(m.group(0))]))
        for m in the_doc.finditer(chunk):
            refs.append((m.end(), "all" if m.group(0).lower().endswith("documents") else "page"))
        refs.sort(key=lambda r: r[0])
        quotes = [(m.start(), m.end(), m.group(1) if m.group(1) is not None else m.group(2))
                  for m in QUOTE.finditer(chunk)]
        for q_start, q_end, q in quotes:
            before = [r for r in refs if r[0] <= q_start]
            if not before:
                continue
            at, doc = before[-1]
            # No sentence ends between the name and the quotation (periods inside other quotations aside).
            between = chunk[at:q_start]
            for s, e, _ in quotes:
                if at <= s and e <= q_start:
                    between = between.replace(chunk[s:e], " " * (e - s))
            # A sentence's end, or a parameter source's own assumption ("A: ..."), ends the attribution.
            if SENTENCE_END.search(between) or re.search(r"\bA:", between) or len(between) > 400:
                continue
            if doc == "page":
                doc = page_last
            if doc is None:
                continue
            out.append((line + chunk.count("\n", 0, q_start), None if doc == "all" else doc, q))
        named = [r for r in refs if isinstance(r[1], dict)]
        if named:
            page_last = named[-1][1]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--document", action="append", default=[], metavar="TITLE=FILE")
    ap.add_argument("--list", action="store_true", help="print every attributed quotation")
    a = ap.parse_args()
    docs = load_registry(os.path.join(HERE, "documents.json"))
    problems = []
    # The list against the documents themselves, where given.
    for spec in a.document:
        title, _, path = spec.partition("=")
        doc = next((d for d in docs if d["title"] == title), None)
        if doc is None or not path:
            print(f"check_quotes: --document {spec}: no document titled '{title}' in documents.json "
                  f"(titles: {', '.join(d['title'] for d in docs)})")
            return 2
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            print(f"check_quotes: --document {spec}: {e}")
            return 2
        lines = {norm(re.sub(r"^#+\s*", "", l)) for l in text.split("\n")}
        body = norm(text)
        for h in doc["headings"]:
            if norm(h) not in lines:
                problems.append(f"documents.json: '{h}' is no heading of {title} ({path})")
        for p in doc["passages"]:
            if norm(p) not in body:
                problems.append(f"documents.json: a passage of {title} is not in {path}: \"{p[:80]}\"")
    pages = [os.path.join(a.root, "README.md")] + sorted(glob.glob(os.path.join(a.root, "docs", "**", "*.md"),
                                                                 recursive=True))
    n = 0
    for page in pages:
        rel = os.path.relpath(page, a.root)
        with open(page, encoding="utf-8") as f:
            text = f.read()
        for line, doc, q in attributions(text, docs):
            n += 1
            candidates = docs if doc is None else [doc]
            ok = any(norm(q) in [norm(h) for h in d["headings"]] or found_in(q, d["passages"]) for d in candidates)
            if a.list:
                print(f"{'ok ' if ok else 'NOT'} {rel}:{line} [{doc['title'] if doc else 'the documents'}] {q[:100]}")
            if not ok:
                problems.append(f"{rel}:{line}: '{q[:120]}' is neither a heading nor a passage of "
                                f"{doc['title'] if doc else 'the documents'} (tests/docs/documents.json)")
    for p in problems:
        print("FAIL " + p)
    print(f"check_quotes: {n} quotations of the documents in {len(pages)} pages, {len(problems)} not found")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
