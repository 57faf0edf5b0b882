"""Griffe extension: a docstring's "Call arguments:" section, rendered like its "Args:".

The layers' docstrings follow Keras's style, with a "Call arguments:" section written like "Args:"
(``name: description``, continuation lines indented). Griffe's Google parser knows no such section
and keeps it as an admonition whose lines run together; this extension turns it into a parameter
list titled "Call arguments:" (mkdocs.yml loads it with mkdocstrings' ``extensions``).
"""

import functools
import re

import griffe

ENTRY = re.compile(r"^(\*{0,2}\w+): (.*)$")


class CallArguments(griffe.Extension):
    def on_instance(self, *, obj, **kwargs):
        docstring = obj.docstring
        if docstring is not None and "Call arguments:" in docstring.value:
            # Parsed when rendered, once the class's signature is known, like any docstring.
            docstring.__class__ = _CallArgumentsDocstring


class _CallArgumentsDocstring(griffe.Docstring):
    @functools.cached_property
    def parsed(self):
        sections = []
        for section in self.parse():
            if section.kind is griffe.DocstringSectionKind.admonition and (
                section.title == "Call arguments"
            ):
                section = griffe.DocstringSectionParameters(
                    parameters(section.value.description, self.parent), title="Call arguments:"
                )
            sections.append(section)
        return sections


def parameters(text, obj):
    """``name: description`` entries, each with its indented continuation lines."""
    entries = []
    for line in text.splitlines():
        match = ENTRY.match(line)
        if match:
            entries.append([match.group(1), match.group(2)])
        elif entries and line.startswith((" ", "\t")):
            entries[-1][1] += " " + line.strip()
        else:
            raise ValueError(f"{obj.path}: cannot read {line!r} in 'Call arguments:'")
    return [griffe.DocstringParameter(name, description=text) for name, text in entries]
