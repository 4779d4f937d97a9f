#!/usr/bin/env python3
"""Checks a META.json against the PGXN Meta Spec 1.0.0 (https://pgxn.org/meta/spec.txt).

    python3 check_meta.py META.json [TREE]

Prints one line per problem and exits 1 if there is any. With TREE, the files that `provides`
names must exist in it. The rules are the spec's, as its JSON schemas (github.com/pgxn/meta,
schema/v1) write them: required keys, no unknown keys but x_ ones, SemVer versions, version
ranges in prereqs, known license names, terms and tags without slashes, spaces or control
characters.
"""
import json
import os
import re
import sys

SEMVER = (r'(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)'
          r'(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?'
          r'(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?')
VERSION_RE = re.compile('^' + SEMVER + '$')
RANGE_RE = re.compile(r'^((([=!]=|[<>]=?)\s*)?(' + SEMVER + r'|0))(,\s*(([=!]=|[<>]=?)\s*)?'
                      + SEMVER + ')*$')
CONTROL = ''.join(chr(c) for c in list(range(0, 32)) + list(range(127, 160)))
LICENSES = {'agpl_3', 'apache_1_1', 'apache_2_0', 'artistic_1', 'artistic_2', 'bsd', 'freebsd',
            'gfdl_1_2', 'gfdl_1_3', 'gpl_1', 'gpl_2', 'gpl_3', 'lgpl_2_1', 'lgpl_3_0', 'mit',
            'mozilla_1_0', 'mozilla_1_1', 'openssl', 'perl_5', 'postgresql', 'qpl_1_0', 'ssleay',
            'sun', 'zlib', 'open_source', 'restricted', 'unrestricted', 'unknown'}
TOP_KEYS = {'name', 'version', 'abstract', 'maintainer', 'license', 'provides', 'meta-spec',
            'description', 'generated_by', 'tags', 'no_index', 'prereqs', 'release_status',
            'resources'}
REQUIRED = ['name', 'version', 'abstract', 'maintainer', 'license', 'provides', 'meta-spec']
PHASES = {'configure', 'build', 'test', 'runtime', 'develop'}
RELATIONS = {'requires', 'recommends', 'suggests', 'conflicts'}

problems = []


def problem(where, what):
    problems.append(f'{where}: {what}')


def custom(key):
    return len(key) > 2 and key[:2] in ('x_', 'X_')


def unknown_keys(where, obj, allowed):
    for key in obj:
        if key not in allowed and not custom(key):
            problem(where, f'unknown key "{key}"')


def nonempty_string(where, value):
    if not isinstance(value, str) or not value:
        problem(where, 'must be a non-empty string')
        return False
    return True


def term(where, value, tag=False):
    """A term: 2+ characters, no slash, backslash, control character or (but in tags) space."""
    if not nonempty_string(where, value):
        return
    if len(value) < 2 or any(c in '/\\' or c in CONTROL or (not tag and c.isspace())
                             for c in value):
        problem(where, f'"{value}" is not a valid ' + ('tag' if tag else 'term'))


def version(where, value):
    if not isinstance(value, str) or not VERSION_RE.match(value):
        problem(where, f'{value!r} is not a semantic version (x.y.z)')


def path(where, value, tree):
    if not nonempty_string(where, value):
        return
    if len(value) < 2 or value.startswith('/') or '\\' in value or '..' in value.split('/'):
        problem(where, f'"{value}" is not a relative Unix path')
    elif tree is not None and not os.path.isfile(os.path.join(tree, value)):
        problem(where, f'"{value}" is not a file of the distribution')


def check(meta, tree):
    if not isinstance(meta, dict):
        problem('META.json', 'must be an object')
        return
    for key in REQUIRED:
        if key not in meta:
            problem('META.json', f'missing required key "{key}"')
    unknown_keys('META.json', meta, TOP_KEYS)

    if 'name' in meta:
        term('name', meta['name'])
    if 'version' in meta:
        version('version', meta['version'])
    for key in ('abstract', 'description', 'generated_by'):
        if key in meta:
            nonempty_string(key, meta[key])

    maintainer = meta.get('maintainer')
    if isinstance(maintainer, list):
        if not maintainer or len(set(map(str, maintainer))) != len(maintainer):
            problem('maintainer', 'a list must be non-empty and without duplicates')
        for i, m in enumerate(maintainer):
            nonempty_string(f'maintainer[{i}]', m)
    elif 'maintainer' in meta:
        nonempty_string('maintainer', maintainer)

    lic = meta.get('license')
    if isinstance(lic, str):
        if lic not in LICENSES:
            problem('license', f'"{lic}" is not a license the spec names')
    elif isinstance(lic, list):
        if not lic or any(item not in LICENSES for item in lic):
            problem('license', 'a list must name licenses the spec knows')
    elif isinstance(lic, dict):
        if not lic or not all(isinstance(u, str) and re.match(r'^[a-z][a-z0-9+.-]*:', u)
                              for u in lic.values()):
            problem('license', 'an object must map names to URIs')
    elif 'license' in meta:
        problem('license', 'must be a string, a list or an object')

    provides = meta.get('provides')
    if isinstance(provides, dict) and provides:
        for ext, spec in provides.items():
            where = f'provides.{ext}'
            term(where, ext)
            if not isinstance(spec, dict):
                problem(where, 'must be an object')
                continue
            for key in ('file', 'version'):
                if key not in spec:
                    problem(where, f'missing required key "{key}"')
            unknown_keys(where, spec, {'file', 'version', 'abstract', 'docfile'})
            if 'file' in spec:
                path(where + '.file', spec['file'], tree)
            if 'docfile' in spec:
                path(where + '.docfile', spec['docfile'], tree)
            if 'version' in spec:
                version(where + '.version', spec['version'])
            if 'abstract' in spec:
                nonempty_string(where + '.abstract', spec['abstract'])
    elif 'provides' in meta:
        problem('provides', 'must be a non-empty object')

    spec = meta.get('meta-spec')
    if isinstance(spec, dict):
        unknown_keys('meta-spec', spec, {'version', 'url'})
        if not isinstance(spec.get('version'), str) or \
                not re.match(r'^1\.0\.[0-9]+$', spec['version']):
            problem('meta-spec.version', 'must be 1.0.x')
        if 'url' in spec and spec['url'] not in ('https://pgxn.org/meta/spec.txt',
                                                 'http://pgxn.org/meta/spec.txt'):
            problem('meta-spec.url', 'must be https://pgxn.org/meta/spec.txt')
    elif 'meta-spec' in meta:
        problem('meta-spec', 'must be an object')

    if 'tags' in meta:
        tags = meta['tags']
        if not isinstance(tags, list) or not tags or len(set(map(str, tags))) != len(tags):
            problem('tags', 'must be a non-empty list without duplicates')
        else:
            for i, tag in enumerate(tags):
                term(f'tags[{i}]', tag, tag=True)
                if isinstance(tag, str) and len(tag) > 255:
                    problem(f'tags[{i}]', 'longer than 255 characters')

    if 'release_status' in meta and meta['release_status'] not in ('stable', 'testing',
                                                                   'unstable'):
        problem('release_status', 'must be stable, testing or unstable')

    if 'prereqs' in meta:
        prereqs = meta['prereqs']
        if not isinstance(prereqs, dict) or not prereqs:
            problem('prereqs', 'must be a non-empty object')
        else:
            unknown_keys('prereqs', prereqs, PHASES)
            for phase, rels in prereqs.items():
                if custom(phase):
                    continue
                if not isinstance(rels, dict) or not rels:
                    problem(f'prereqs.{phase}', 'must be a non-empty object')
                    continue
                unknown_keys(f'prereqs.{phase}', rels, RELATIONS)
                for rel, reqs in rels.items():
                    where = f'prereqs.{phase}.{rel}'
                    if custom(rel):
                        continue
                    if not isinstance(reqs, dict) or not reqs:
                        problem(where, 'must be a non-empty object')
                        continue
                    for name, rng in reqs.items():
                        term(f'{where}.{name}', name)
                        if not (rng == 0 or (isinstance(rng, str) and RANGE_RE.match(rng))):
                            problem(f'{where}.{name}', f'{rng!r} is not a version range')

    if 'no_index' in meta:
        no_index = meta['no_index']
        if not isinstance(no_index, dict) or not no_index:
            problem('no_index', 'must be a non-empty object')
        else:
            unknown_keys('no_index', no_index, {'file', 'directory'})

    if 'resources' in meta:
        res = meta['resources']
        if not isinstance(res, dict) or not ({'homepage', 'bugtracker', 'repository'} & set(res)):
            problem('resources', 'must name a homepage, bugtracker or repository')
        else:
            unknown_keys('resources', res, {'homepage', 'bugtracker', 'repository'})


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    try:
        with open(sys.argv[1], encoding='utf-8') as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        print(f'{sys.argv[1]}: not readable as JSON: {e}')
        return 1
    check(meta, sys.argv[2] if len(sys.argv) == 3 else None)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
