"""The README's code blocks, as the client tests run them: the code a user copies, so that the
tests cannot drift from it. A test may load only the blocks that README.md marks as tested by
that test's file (`<!-- tested by test/client/<file> -->` above the fence); each test file pins
the text of its blocks (`readme-pin`, checked by test/lib/readme_blocks.py)."""

import os
import re

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'README.md')


def block(test_file, language, marker):
    """The one block in `language` containing `marker` that is marked as tested by `test_file`
    (pass __file__)."""
    with open(README, encoding='utf-8') as f:
        text = f.read()
    mine = 'test/client/' + os.path.basename(test_file)
    blocks = [b for b in re.findall(r'^<!-- tested by ' + re.escape(mine) + r' -->\n```' +
                                    language + r'\n(.*?)^```', text, re.S | re.M)
              if marker in b]
    if len(blocks) != 1:
        raise RuntimeError(f'README.md has {len(blocks)} {language} blocks with {marker!r} '
                           f'marked as tested by {mine}')
    return blocks[0]
