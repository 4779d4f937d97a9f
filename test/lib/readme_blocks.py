#!/usr/bin/env python3
"""The README's tested code blocks stay tested.

A code block that a test runs is marked in README.md by the line just above its fence:

    <!-- tested by test/client/test_django.py -->

and the test file pins the block's content with a line holding `readme-pin <hash>`, the first 16
hex digits of the SHA-256 of the block's text (between the fences). This check fails when

  - a marked block changed (or moved to another file's marker) and its test still pins the old
    text: whoever changes a tested block must look at its test and pin the new text;
  - a test pins text that no marked block has any more (a block removed or unmarked);
  - a marker names a file that does not exist.

Prints `ok: ...` / `FAILED: ...` lines and, last, `readme-blocks: P passed, F failed`.
Run with --pins to print the pin of every marked block.
"""

import hashlib
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
MARKER = re.compile(r'^<!-- tested by (\S+) -->$')
FENCE = re.compile(r'^```(\w*)$')
PIN = re.compile(r'readme-pin ([0-9a-f]{16})')


def pin_of(text):
    return hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]


def marked_blocks(readme_text):
    """(test file, language, text, line number) of every marked block."""
    lines = readme_text.split('\n')
    blocks = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence or not fence.group(1):
            i += 1
            continue
        start = i
        i += 1
        body = []
        while i < len(lines) and lines[i] != '```':
            body.append(lines[i])
            i += 1
        marker = MARKER.match(lines[start - 1]) if start > 0 else None
        if marker:
            blocks.append((marker.group(1), fence.group(1), '\n'.join(body) + '\n', start + 1))
        i += 1
    return blocks


def main():
    with open(os.path.join(ROOT, 'README.md'), encoding='utf-8') as f:
        blocks = marked_blocks(f.read())
    if '--pins' in sys.argv:
        for test, language, text, line in blocks:
            print(f'README.md:{line} ({language}) tested by {test}: readme-pin {pin_of(text)}')
        return 0
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print(f'{"ok" if ok else "FAILED"}: {what}')
        if ok:
            passed += 1
        else:
            failed += 1

    marked_pins = set()
    for test, language, text, line in blocks:
        pin = pin_of(text)
        marked_pins.add(pin)
        path = os.path.join(ROOT, test)
        if not os.path.isfile(path):
            check(False, f'README.md:{line}: the {language} block names {test}, which does not exist')
            continue
        with open(path, encoding='utf-8') as f:
            pinned = PIN.findall(f.read())
        check(pin in pinned,
              f'README.md:{line}: the {language} block is pinned by {test}' +
              ('' if pin in pinned else
               f' (it changed: look at the test, then pin the new text: readme-pin {pin})'))
    for directory, _, files in os.walk(os.path.join(ROOT, 'test')):
        for name in files:
            path = os.path.join(directory, name)
            try:
                with open(path, encoding='utf-8') as f:
                    pins = PIN.findall(f.read())
            except (UnicodeDecodeError, OSError):
                continue
            for pin in pins:
                if path.endswith('readme_blocks.py'):
                    continue
                check(pin in marked_pins,
                      f'{os.path.relpath(path, ROOT)} pins readme-pin {pin}' +
                      ('' if pin in marked_pins else ', which no marked README block has'))
    check(len(blocks) > 0, f'README.md marks {len(blocks)} code blocks as tested')
    print(f'readme-blocks: {passed} passed, {failed} failed')
    return 0 if failed == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
