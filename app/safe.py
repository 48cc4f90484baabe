"""Text from strangers made safe to show: every name, warning and echoed value goes through here.

Streamlit renders markdown in captions, metrics, warnings and titles, so a model name like
`www.evil-example.com/login` or `[x](http://…)` would become a link, `# x` a heading.
`plain` backslash-escapes every ASCII punctuation mark (CommonMark's escape), which leaves
the characters as typed and turns off links, autolinks, emphasis, headings and lists.
"""

from __future__ import annotations

import string

_PUNCTUATION = frozenset(string.punctuation)


def plain(text: object, max_chars: int = 200) -> str:
    """Shortened, control characters shown as '?', every punctuation mark escaped."""
    text = str(text)
    short = text[:max_chars] + ("…" if len(text) > max_chars else "")
    shown = "".join(c if c.isprintable() else "?" for c in short)
    return "".join("\\" + c if c in _PUNCTUATION else c for c in shown)
