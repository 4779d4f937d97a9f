"""The server log of the soak's own cluster, from where the soak began: no crash, no PANIC, no
assertion, no shared memory running out, no resource a backend forgot to give back.

The log holds thousands of ERRORs and FATALs the soak causes (cancels, timeouts, deadlocks,
terminations); those are not findings. WARNINGs are: the workload provokes none, so each is
listed, and those that say a resource leaked fail the check along with the crashes.
"""

import re

FINDINGS = re.compile(
    r'terminated by signal|was terminated by|PANIC|TRAP:|out of shared memory'
    r'|resource was not closed|leaked|reference leak|still referenced|not closed'
    r'|server process .* exited with exit code [^0]|all server processes terminated',
    re.IGNORECASE)


def check(path, offset):
    try:
        with open(path, errors='replace') as f:
            f.seek(offset)
            lines = f.read().splitlines()
    except OSError as error:
        return False, f'cannot read {path}: {error}'
    findings = [line for line in lines if FINDINGS.search(line)]
    warnings = [line for line in lines if 'WARNING:' in line]
    errors = sum(1 for line in lines if 'ERROR:' in line)
    ok = not findings and not warnings
    seen = (f'{len(lines)} lines, {errors} ERRORs (provoked), {len(warnings)} WARNINGs, '
            f'{len(findings)} findings')
    for line in (findings + warnings)[:10]:
        seen += f'\n      {line}'
    return ok, seen
