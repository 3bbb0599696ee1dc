#!/usr/bin/env python3
"""What Doxygen does not check in the public headers (part of the test `docs_complete`).

1. Ownership: every pointer parameter of a documented function, or of a documented
   function-pointer field (plugin vtables, the host API), says who owns it with one of the
   words the headers define: "copied", "borrowed", "lives until"/"live until", "owned by".
   With \\param lines, the parameter's own line must carry the word; a field documented in
   prose (no \\param) must name the parameter and carry a word. Parameters of type
   jager_plugin_handle * are tokens, never dereferenced (jager_plugin.h), and are exempt.
2. Reading order: every "\\name" section of a header is listed in the "Reading order:"
   sentence of its opening comment (when it has one), in the same order.

Usage: check_headers.py HEADER...   Exit 1 with one line per gap.
"""
import re
import sys

WORDS = re.compile(r"\b(copied|borrowed|lives? until|owned by)\b", re.I)
EXEMPT_TYPES = ("jager_plugin_handle",)


def strip_comments(s):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", s, flags=re.S)


def last_paren_group(decl):
    """The parameter list: the last top-level (...) group of a declaration."""
    depth, end, groups = 0, None, []
    for i, c in enumerate(decl):
        if c == "(":
            if depth == 0:
                start = i
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                groups.append(decl[start + 1:i])
    return groups[-1] if groups else None


def split_params(plist):
    out, depth, cur = [], 0, ""
    for c in plist:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    out.append(cur)
    return [p.strip() for p in out if p.strip() and p.strip() != "void" and p.strip() != "..."]


def param_name(p):
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", p)  # a function-pointer parameter
    if m:
        return m.group(1)
    m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", p)
    return m.group(1) if m else None


def is_pointer(p):
    return ("*" in p or "[" in p) and not any(t in p for t in EXEMPT_TYPES)


def param_docs(doc):
    """\\param name -> its text (up to the next command or the end of the comment)."""
    docs = {}
    for m in re.finditer(r"[\\@]param(?:\[[a-z, ]+\])?\s+(\w+)(.*?)(?=[\\@](?:param|return|returns|since|note|see|deprecated)\b|\Z)", doc, re.S):
        docs[m.group(1)] = m.group(2)
    return docs


def check_ownership(path, text, gaps):
    # A documentation comment and the declaration it documents: the one that follows it
    # (up to ';' or '{'), or for a trailing "/**<" comment the one it ends.
    for m in re.finditer(r"/\*\*(<?)(.*?)\*/", text, re.S):
        doc = re.sub(r"\n\s*\*(?!/)", "\n", m.group(2))
        if m.group(1):
            end = len(text[:m.start()].rstrip())
            start = max(text.rfind(";", 0, end - 1), text.rfind("{", 0, end - 1),
                        text.rfind("*/", 0, end - 1) + 1) + 1
            decl_at, decl = start, text[start:end]
        else:
            d = re.match(r"\s*([^;{}/#]*?[;{])", text[m.end():], re.S)
            if not d:
                continue
            decl_at, decl = m.end() + d.start(1), d.group(1)
        decl = strip_comments(decl)
        if "(" not in decl or decl.lstrip().startswith("typedef struct"):
            continue
        plist = last_paren_group(decl)
        if plist is None:
            continue
        line = text.count("\n", 0, decl_at + len(decl) - len(decl.lstrip())) + 1
        where = re.search(r"\(?\s*\*?\s*(\w+)\s*\)?\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*;?\s*$", decl)
        fname = where.group(1) if where else "?"
        docs = param_docs(doc)
        for p in split_params(plist):
            name = param_name(p)
            if not name or not is_pointer(p):
                continue
            if docs:
                said = docs.get(name)
                if said is None:
                    continue  # a missing \param is Doxygen's to report (WARN_NO_PARAMDOC)
                if not WORDS.search(said):
                    gaps.append(f"{path}:{line}: {fname}: \\param {name} says no owner "
                                f"(copied/borrowed/lives until/owned by): {' '.join(said.split())[:80]}")
            elif not (re.search(rf"\b{name}\b", doc) and WORDS.search(doc)):
                gaps.append(f"{path}:{line}: {fname}: pointer parameter '{name}' has no ownership word in its comment")


def check_reading_order(path, text, gaps):
    m = re.search(r"Reading order:(.*?)\.\s*\n\s*\*\s*\n", text, re.S)
    if not m:
        return
    order = " ".join(m.group(1).replace("*", " ").split()).lower()
    at = 0
    for n in re.finditer(r"\\name\s+([^\n(*]+)", text):
        title = n.group(1).strip().rstrip(".").lower()
        i = order.find(title, at)
        if i < 0:
            line = text.count("\n", 0, n.start()) + 1
            where = "out of order in" if title in order else "missing from"
            gaps.append(f"{path}:{line}: section '{n.group(1).strip()}' {where} the header's reading order")
        else:
            at = i + len(title)


def main(paths):
    gaps = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        check_ownership(path, text, gaps)
        check_reading_order(path, text, gaps)
    for g in gaps:
        print(g)
    if gaps:
        print(f"{len(gaps)} gap(s) in the public headers' documentation")
        return 1
    print(f"headers: every pointer parameter owned, every section in its reading order ({len(paths)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
