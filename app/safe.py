"""Text from strangers made safe to show: every name, warning and echoed value goes through here.

Streamlit renders markdown in captions, metrics, warnings and titles, so a model name like
`www.evil-example.com/login` or `[x](http://…)` would become a link, `# x` a heading.
`plain` backslash-escapes every ASCII punctuation mark (CommonMark's escape), which leaves
the characters as typed and turns off links, emphasis, headings and lists. It does not turn
off GFM's literal autolinks: an escape is undone before the text is scanned, so `www\\.x\\.com`
and `http\\:\\/\\/x` still became links in a real browser (AppTest sees only the source). Those
need their trigger broken: a zero-width space after `www`, after a scheme's `:` and after `@`
(an address), invisible on the page.
"""

from __future__ import annotations

import re
import string

_PUNCTUATION = frozenset(string.punctuation)
_ZERO_WIDTH_SPACE = "\u200b"
# GFM's autolink literals (github.github.com/gfm, "Autolinks (extension)"): www., a scheme's ://, an address's @.
_AUTOLINK_TRIGGER = re.compile(r"(?i)(www)(?=\.)|(?<=[a-z0-9]:)(?=/)|(?<=@)")


def plain(text: object, max_chars: int = 200) -> str:
    """Shortened, control characters shown as '?', every punctuation mark escaped, no autolink."""
    text = str(text)
    short = text[:max_chars] + ("…" if len(text) > max_chars else "")
    shown = "".join(c if c.isprintable() else "?" for c in short)
    unlinked = _AUTOLINK_TRIGGER.sub(lambda m: (m.group(1) or "") + _ZERO_WIDTH_SPACE, shown)
    return "".join("\\" + c if c in _PUNCTUATION else c for c in unlinked)
