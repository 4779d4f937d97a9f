#!/usr/bin/env python3
"""Every operator and function the install and update scripts use is schema-qualified.

Why: CREATE EXTENSION and ALTER EXTENSION UPDATE run a script as a superuser with search_path =
the extension's schema, then pg_temp (pg_catalog implicitly first). Whoever may create objects
in that schema (in PG 15 the database owner owns public) can plant there an operator or function
whose argument types match a call better than pg_catalog's: `public.=(oid, regprocedure)` beats
pg_catalog's =(oid, oid), which needs a cast; `public.string_agg(text, unknown)` beats
string_agg(text, text) for a literal delimiter. The script then runs the planted code as the
superuser (CVE-2022-2625, CVE-2023-39417; README "Security"; test/tap/014_script_search_path.pl).
A qualified name (`pg_catalog.string_agg(...)`, `OPERATOR(pg_catalog.=)`) is looked up in that
schema alone.

This reads every pgsem--*.sql (or the files named) as PostgreSQL's lexer does, and the bodies of
their DO blocks and of SQL and PL/pgSQL functions as code, and reports:
  - a call `name(...)` whose name is not qualified by pg_catalog, @extschema@ or pgsem;
  - a bare operator in an expression (`=`, `<>`, `<`, `||`, `+`, `-`, ...), and OPERATOR(...)
    without pg_catalog;
  - the grammar's hidden operator lookups, which resolve `=`, `<=` or `~~` through the
    search_path and cannot be qualified: IN (...), BETWEEN, LIKE, ILIKE, SIMILAR TO,
    IS [NOT] DISTINCT FROM, NULLIF, CASE x WHEN (write OPERATOR(pg_catalog.=) ANY (...) etc.).
Fine, because no operator or function is looked up: grammar that looks like a call (COALESCE,
GREATEST, LEAST, EXISTS, CAST, ROW, ARRAY, VALUES, FILTER, ...); names being defined or named in
DDL (CREATE FUNCTION f(, COMMENT ON / DROP / GRANT ... ON FUNCTION f(, CREATE TABLE t (, INSERT
INTO t (, aliases t(a, b)); type modifiers (numeric(10, 2)); `::type` casts (types resolve in
pg_catalog first, and none of pg_catalog's can be shadowed); `=` that assigns: SET x = ..., UPDATE
... SET col = ..., parameter defaults, DDL option lists (LEFTARG = oid), PL/pgSQL `x = ...` and
DECLARE, GET DIAGNOSTICS, RAISE ... USING; `:=`, `=>`; count(*), SELECT *, a negative number.
Not read: strings (dynamic SQL for EXECUTE, C functions' link symbols), comments.

Prints `FAILED: file:line: ...` per finding, then `sql-qualified: N scripts, F findings`; exits 1
when anything was found (or no script was), 2 when its own examples (EXAMPLES below) fail.
"""

import glob
import os
import re
import sys
from collections import namedtuple

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
SCHEMAS = {'pg_catalog', '@extschema@', 'pgsem'}  # the schemas the scripts may call into

# kind: ident (value lower-cased unless quoted), string (value: its content), number, param ($1),
# op (an operator), punct (( ) [ ] , ; . : :: := .. =>).
Token = namedtuple('Token', 'kind value line quoted')

# ---------------------------------------------------------------------------------------------
# Lexer: PostgreSQL's rules for what is a comment, a string, an identifier and an operator.
# ---------------------------------------------------------------------------------------------

LEXEMES = re.compile(r'''
    (?P<space>\s+)
  | (?P<comment>--[^\n]*)
  | (?P<placeholder>@ext\w+(?::\w+)?@)                   # @extschema@: substituted before parsing
  | (?P<estring>[Ee]'(?:[^'\\]|\\.|'')*')
  | (?P<string>(?:[BbXxNn]|[Uu]&)?'(?:[^']|'')*')
  | (?P<dollar>\$(?P<tag>[A-Za-z_\x80-\uffff][\w\x80-\uffff]*)?\$)
  | (?P<param>\$\d+)
  | (?P<qident>(?:[Uu]&)?"(?:[^"]|"")*")
  | (?P<number>(?:\d+\.(?!\.)\d*|\.\d+|\d+)(?:[Ee][+-]?\d+)?)
  | (?P<ident>[A-Za-z_\x80-\uffff][\w$\x80-\uffff]*)
  | (?P<punct>::|:=|\.\.|[()\[\],;.:])
  | (?P<op>[-+*/<>=~!@#%^&|`?]+)
''', re.VERBOSE | re.DOTALL)


def lex(text, line=1):
    """Tokens of text, whose first line is line. Raises ValueError on what it cannot read."""
    # CREATE EXTENSION drops the lines that start with \echo (the scripts' "\echo ... \quit").
    text = re.sub(r'(?m)^\\echo.*$', '', text)
    tokens, i = [], 0
    while i < len(text):
        if text.startswith('/*', i):  # comments nest
            depth, j = 0, i
            while j < len(text):
                if text.startswith('/*', j):
                    depth, j = depth + 1, j + 2
                elif text.startswith('*/', j):
                    depth, j = depth - 1, j + 2
                    if depth == 0:
                        break
                else:
                    j += 1
            if depth:
                raise ValueError(f'line {line}: unterminated comment')
            line += text.count('\n', i, j)
            i = j
            continue
        m = LEXEMES.match(text, i)
        if not m:
            raise ValueError(f'line {line}: cannot read {text[i:i + 20]!r}')
        kind, s, start = m.lastgroup, m.group(), line
        if kind == 'dollar':
            end = text.find(s, m.end())
            if end < 0:
                raise ValueError(f'line {line}: unterminated {s} string')
            body = text[m.end():end]
            tokens.append(Token('string', body, start, False))
            line += text.count('\n', i, end + len(s))
            i = end + len(s)
            continue
        if kind == 'op':
            # An operator ends before a comment, and a multi-character operator cannot end in + or
            # - unless it holds one of ~ ! @ # % ^ & | ` ? (so `=-1` is `=` and `-1`).
            s = re.split(r'--|/\*', s)[0]
            while len(s) > 1 and s[-1] in '+-' and not set(s) & set('~!@#%^&|`?'):
                s = s[:-1]
            if s == '=>':
                kind = 'punct'
        line += s.count('\n')
        i += len(s)
        if kind in ('space', 'comment'):
            continue
        if kind == 'placeholder':
            tokens.append(Token('ident', '@extschema@', start, True))
        elif kind in ('string', 'estring'):
            tokens.append(Token('string', s[s.index("'") + 1:-1].replace("''", "'"), start, False))
        elif kind == 'qident':
            tokens.append(Token('ident', s[s.index('"') + 1:-1].replace('""', '"'), start, True))
        elif kind == 'ident':
            tokens.append(Token('ident', s.lower(), start, False))
        else:
            tokens.append(Token(kind, s, start, False))
    return tokens


# ---------------------------------------------------------------------------------------------
# Words
# ---------------------------------------------------------------------------------------------

# Grammar, not functions, though a parenthesis may follow them.
NOT_CALLS = set('''
    all and any array as asc atomic between by case cast check coalesce collate conflict
    constraint cross cube default desc distinct do else elsif end enum except exclude execute
    exists filter for foreign from full greatest group having if ilike in include inner intersect
    into is join key lateral least left like limit loop natural not nullif offset on only or order
    outer over partition perform primary query raise references return returning returns right
    rollup row rows select set setof sets similar some table then to union unique using values
    view when where while window with within
'''.split())

# Words after which an expression starts: an identifier after one of them is not a name (column,
# parameter, alias) that a type or an alias column list would follow.
EXPRESSION_WORDS = NOT_CALLS | {'null', 'true', 'false', 'escape', 'zone', 'at', 'assert',
                                'next', 'elsif', 'exit', 'continue', 'strict', 'variadic'}

# Types that take modifiers: numeric(10, 2) after a column or parameter name is no call.
TYPMOD_TYPES = {'numeric', 'decimal', 'varchar', 'char', 'character', 'varying', 'bit', 'varbit',
                'time', 'timetz', 'timestamp', 'timestamptz', 'interval', 'float', 'bpchar'}

# Before which a negative number is a constant (the grammar folds the minus), not an operator.
BEFORE_OPERAND = {'select', 'then', 'else', 'when', 'return', 'default', 'and', 'or', 'not', 'by',
                  'limit', 'offset', 'values', 'distinct', 'all', 'case', 'if', 'elsif', 'while',
                  'perform', 'in'}


def is_word(token, *words):
    return token is not None and token.kind == 'ident' and not token.quoted and \
        token.value in words


def is_punct(token, *values):
    return token is not None and token.kind == 'punct' and token.value in values


def is_name(token):
    """An identifier that is not grammar: a column, parameter, variable or alias."""
    return token is not None and token.kind == 'ident' and \
        (token.quoted or token.value not in EXPRESSION_WORDS)


def at(tokens, i):
    return tokens[i] if 0 <= i < len(tokens) else None


def parens(tokens):
    """depth[i]: the parenthesis depth at token i; opener[i]: the index of the ( that encloses
    token i, or None; close[k]: the index of the ) that matches the ( at k."""
    depth, opener, close, stack = [], [], {}, []
    for i, t in enumerate(tokens):
        if is_punct(t, ')') and stack:
            close[stack.pop()] = i
        depth.append(len(stack))
        opener.append(stack[-1] if stack else None)
        if is_punct(t, '('):
            stack.append(i)
    return depth, opener, close


def split(tokens, separator=';'):
    """Statements: tokens between separators at parenthesis depth 0."""
    parts, current, d = [], [], 0
    for t in tokens:
        d += is_punct(t, '(') - is_punct(t, ')')
        if d == 0 and is_punct(t, separator):
            parts.append(current)
            current = []
        else:
            current.append(t)
    return [p for p in parts + [current] if p]


# ---------------------------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------------------------

class Checker:
    def __init__(self, name):
        self.name = name
        self.findings = []

    def report(self, token, message):
        self.findings.append(f'{self.name}:{token.line}: {message}')

    # ---- SQL -----------------------------------------------------------------------------

    def sql(self, tokens):
        for statement in split(tokens):
            self.statement(statement)

    def statement(self, toks):
        words = [t.value for t in toks[:8] if t.kind == 'ident' and not t.quoted]
        first = words[0] if words else ''
        if first == 'do':
            self.do_block(toks)
            return
        kind = [w for w in words[1:] if w not in ('or', 'replace', 'temp', 'temporary', 'unique',
                                                  'unlogged', 'constraint', 'trusted')][:1]
        kind = kind[0] if kind else ''
        if first == 'create' and kind in ('function', 'procedure'):
            self.create_function(toks)
            return
        context = set()
        if (first in ('create', 'alter', 'drop') and kind == 'operator' or
                first == 'comment' and words[1:3] == ['on', 'operator']) and \
                not {'class', 'family'} & set(words[:4]):
            context.add('operator names')      # no expressions in it: its operators are names
        if first == 'create' and kind in ('operator', 'aggregate', 'type', 'collation', 'text'):
            context.add('definition list')     # (LEFTARG = oid, ...)
        if first in ('drop', 'grant', 'revoke', 'comment', 'security') or \
                first == 'alter' and kind == 'extension':
            context.add('signature list')      # DROP FUNCTION a(int), b(int)
        if first == 'create' and kind in ('index', 'table'):
            context.add('relation list')       # ON t (cols), USING btree (cols)
        self.tokens(toks, context)

    def do_block(self, toks):
        language = 'plpgsql'
        for i, t in enumerate(toks):
            if is_word(t, 'language') and at(toks, i + 1) is not None:
                language = toks[i + 1].value.lower()
        for t in toks:
            if t.kind == 'string':
                self.body(t, language)

    def create_function(self, toks):
        language, body_at = None, None
        for i, t in enumerate(toks):
            if is_word(t, 'language') and at(toks, i + 1) is not None:
                language = toks[i + 1].value.lower()
            if is_word(t, 'as') and at(toks, i + 1) is not None and toks[i + 1].kind == 'string':
                body_at = i + 1
        if body_at is not None and language not in ('c', 'internal'):
            self.body(toks[body_at], language)  # a C function's strings are its library and symbol
        # The header: the parameters (with their defaults), RETURNS, SET, a BEGIN ATOMIC body.
        self.tokens(toks, set(), defaults=self.parameter_defaults(toks))

    def parameter_defaults(self, toks):
        """Indices of the `=` that give a parameter its default (f(a int = 1)), one at most per
        parameter and none where DEFAULT does it."""
        depth, _, close = parens(toks)
        first = next((i for i, t in enumerate(toks) if is_punct(t, '(')), None)
        if first is None:
            return set()
        found, seen = set(), False
        for i in range(first + 1, close.get(first, len(toks))):
            if depth[i] != depth[first] + 1:
                continue
            if is_punct(toks[i], ','):
                seen = False
            elif is_word(toks[i], 'default'):
                seen = True
            elif toks[i].kind == 'op' and toks[i].value == '=' and not seen:
                found.add(i)
                seen = True
        return found

    def body(self, token, language):
        try:
            code = lex(token.value, token.line)
        except ValueError as e:
            self.report(token, f'cannot read this {language} body: {e}')
            return
        if language == 'sql':
            self.sql(code)
        elif language == 'plpgsql':
            self.plpgsql(code)
        else:
            self.report(token, f'a body in language {language} cannot be checked')

    # ---- PL/pgSQL ------------------------------------------------------------------------

    def plpgsql(self, tokens):
        """Statements end at `;`; a block's BEGIN, DECLARE, THEN, ELSE and LOOP start one too."""
        declaring = False
        for segment in split(tokens):
            for part in self.plpgsql_parts(segment):
                while part and (is_word(part[0], 'declare', 'begin', 'exception') or
                                part[0].kind == 'op' and part[0].value == '<<'):
                    if part[0].kind == 'op':  # <<label>>
                        part = part[3:]
                        continue
                    declaring = is_word(part[0], 'declare') or \
                        (declaring and not is_word(part[0], 'begin'))
                    part = part[1:]
                if not part or is_word(part[0], 'end'):  # END, END IF, END LOOP, END CASE
                    continue
                if declaring:
                    self.declaration(part)
                else:
                    self.plpgsql_statement(part)

    def plpgsql_parts(self, segment):
        """IF c THEN s1 ELSE s2 -> IF c | s1 | s2: THEN, ELSE and LOOP outside parentheses and
        CASE expressions end a part."""
        parts, current, d, cases = [], [], 0, 0
        for i, t in enumerate(segment):
            d += is_punct(t, '(') - is_punct(t, ')')
            if is_word(t, 'case') and not is_word(at(segment, i - 1), 'end'):
                cases += 1
            elif is_word(t, 'end') and cases:
                cases -= 1
            if d == 0 and cases == 0 and is_word(t, 'then', 'else', 'loop'):
                parts.append(current)
                current = []
            else:
                current.append(t)
        return [p for p in parts + [current] if p]

    def declaration(self, part):
        """name [CONSTANT] type [COLLATE c] [NOT NULL] [{DEFAULT | := | =} expression], or a
        cursor: name CURSOR [(arguments)] FOR query."""
        for i, t in enumerate(part):
            if is_word(t, 'for', 'is') and any(is_word(x, 'cursor') for x in part[:i]):
                self.statement(part[i + 1:])
                return
            if is_word(t, 'default') or is_punct(t, ':=') or t.kind == 'op' and t.value == '=':
                self.tokens(part[i + 1:], set())
                return

    def plpgsql_statement(self, part):
        # target = expression, target := expression (target: a.b[1])
        i = 0
        while is_name(at(part, i)) and (i == 0 or is_punct(at(part, i - 1), '.')) or \
                is_punct(at(part, i), '.'):
            i += 1
        if i and at(part, i) is not None and is_punct(part[i], '['):
            d = 0
            while i < len(part):
                d += is_punct(part[i], '[') - is_punct(part[i], ']')
                i += 1
                if d == 0 and not is_punct(at(part, i), '['):
                    break
        if i and (is_punct(at(part, i), ':=') or at(part, i) is not None and
                  part[i].kind == 'op' and part[i].value == '='):
            self.tokens(part[i + 1:], set())
            return
        if is_word(at(part, 0), 'get'):  # GET [STACKED] DIAGNOSTICS v = ITEM, ...: no expressions
            return
        if is_word(at(part, 0), 'raise'):
            # RAISE level 'format', expression, ... USING option = expression, ...
            options = set()
            using = next((j for j, t in enumerate(part) if is_word(t, 'using')), None)
            if using is not None:
                depth = parens(part)[0]
                for j in range(using + 1, len(part) - 1):
                    if depth[j] == 0 and is_name(part[j]) and \
                            (j == using + 1 or is_punct(part[j - 1], ',')) and \
                            part[j + 1].kind == 'op' and part[j + 1].value == '=':
                        options.add(j + 1)
            self.tokens(part, set(), defaults=options)
            return
        self.statement(part)

    # ---- one statement's tokens ----------------------------------------------------------

    def tokens(self, toks, context, defaults=frozenset()):
        """Reports the calls and operators of one statement. defaults: indices of `=` tokens that
        assign rather than compare."""
        depth, opener, _ = parens(toks)
        assigns = set(defaults) | self.assignments(toks, depth, context)
        skip = set()
        for i, t in enumerate(toks):
            if i in skip:
                continue
            if is_punct(t, '::'):
                skip |= self.type_after(toks, i + 1)
            elif is_word(t, 'operator'):
                skip |= self.operator(toks, i)
            elif t.kind == 'op':
                self.bare_operator(toks, i, assigns, context)
            elif t.kind == 'ident':
                if not t.quoted:
                    self.hidden_operator(toks, i)
                if is_punct(at(toks, i + 1), '('):
                    self.call(toks, i, depth, opener, context)

    def assignments(self, toks, depth, context):
        """`=` that assigns: SET [LOCAL] name = (and UPDATE's SET a = 1, b = 2), and option lists:
        CREATE OPERATOR ... (LEFTARG = oid), WITH (fillfactor = 70), SET (option = value)."""
        found = set()
        for i, t in enumerate(toks):
            if not (t.kind == 'op' and t.value == '='):
                continue
            j = i - 1  # the start of a (qualified) name before the =
            while is_punct(at(toks, j - 1), '.') and at(toks, j - 2) is not None:
                j -= 2
            if not (at(toks, j) is not None and toks[j].kind == 'ident'):
                continue
            lead = at(toks, j - 1)
            if is_word(lead, 'local', 'session'):
                lead = at(toks, j - 2)
            if is_word(lead, 'set'):
                found.add(i)
            elif is_punct(lead, ',', '('):
                # in UPDATE's SET list, or in an option list
                k = j - 1
                while k >= 0 and not (depth[k] < depth[i] and is_punct(toks[k], '(')) and \
                        not (depth[k] == depth[i] and is_word(toks[k], 'set', 'where', 'from')):
                    k -= 1
                if k >= 0 and is_word(toks[k], 'set'):
                    found.add(i)
                elif k >= 0 and is_punct(toks[k], '(') and (
                        'definition list' in context or is_word(at(toks, k - 1), 'with', 'set')):
                    found.add(i)
        return found

    def type_after(self, toks, i):
        """The indices of the type name that starts at i (after ::): pg_catalog.numeric(10, 2)[],
        double precision, timestamp(3) with time zone, character varying."""
        taken = set()
        while at(toks, i) is not None and toks[i].kind == 'ident':
            taken.add(i)
            i += 1
            if is_punct(at(toks, i), '.'):
                taken.add(i)
                i += 1
            elif is_word(at(toks, i), 'precision', 'varying', 'with', 'without', 'time', 'zone'):
                continue
            elif is_punct(at(toks, i), '('):
                d = 0
                while at(toks, i) is not None:
                    d += is_punct(toks[i], '(') - is_punct(toks[i], ')')
                    taken.add(i)
                    i += 1
                    if d == 0:
                        break
                if is_word(at(toks, i), 'with', 'without'):
                    continue
                break
            else:
                break
        while is_punct(at(toks, i), '[', ']') or \
                at(toks, i) is not None and toks[i].kind == 'number' and \
                is_punct(at(toks, i - 1), '['):
            taken.add(i)
            i += 1
        return taken

    def operator(self, toks, i):
        """OPERATOR(schema.op) in an expression; an operator's name in DDL (CREATE OPERATOR
        schema.op, OPERATOR CLASS). The indices it read."""
        if not is_punct(at(toks, i + 1), '('):
            taken = set()
            j = i + 1
            if at(toks, j) is not None and toks[j].kind == 'ident' and \
                    is_punct(at(toks, j + 1), '.'):
                taken |= {j, j + 1}
                j += 2
            if at(toks, j) is not None and toks[j].kind == 'op':
                taken.add(j)
            return taken
        name = toks[i + 2:i + 5]
        if len(name) == 3 and name[0].kind == 'ident' and is_punct(name[1], '.') and \
                name[2].kind == 'op' and is_punct(at(toks, i + 5), ')'):
            if name[0].value != 'pg_catalog':
                self.report(toks[i], f'OPERATOR({name[0].value}.{name[2].value}): '
                                     f'write OPERATOR(pg_catalog.{name[2].value})')
            return set(range(i + 1, i + 6))
        self.report(toks[i], 'OPERATOR(...) without a schema: write OPERATOR(pg_catalog.op)')
        end = parens(toks)[2].get(i + 1, len(toks) - 1)
        return set(range(i + 1, end + 1))

    def bare_operator(self, toks, i, assigns, context):
        t, before, after = toks[i], at(toks, i - 1), at(toks, i + 1)
        if i in assigns or 'operator names' in context:
            return
        after_operator = before is None or before.kind == 'op' or \
            is_punct(before, '(', ',', '[', ':=', '=>') or is_word(before, *BEFORE_OPERAND) or \
            is_punct(before, ')') and is_word(at(toks, i - 6), 'operator')
        if t.value == '*' and (before is None or is_punct(before, '(', ',', '.') or
                               is_word(before, 'select', 'distinct', 'all', 'returning')):
            return  # count(*), SELECT *, t.*
        if t.value == '-' and after is not None and after.kind == 'number' and after_operator:
            return  # a negative constant
        if t.value == '%' and is_word(after, 'type', 'rowtype'):
            return  # PL/pgSQL's v%TYPE
        self.report(t, f'bare operator {t.value}: write OPERATOR(pg_catalog.{t.value})')

    def name_start(self, toks, i):
        """The index of the first part of the (qualified) name that ends at i."""
        while is_punct(at(toks, i - 1), '.') and at(toks, i - 2) is not None and \
                toks[i - 2].kind == 'ident':
            i -= 2
        return i

    def ddl_name(self, toks, i, depth, context):
        """Whether the name that ends at i, followed by (, names something in DDL rather than
        calling it: CREATE/ALTER/DROP/COMMENT ON/GRANT ON FUNCTION f( (but EXECUTE FUNCTION f( in
        CREATE TRIGGER calls f), DROP FUNCTION a(int), b(int), CREATE TABLE t (, INSERT INTO t (,
        CREATE INDEX ON t USING btree (, a type after AS, an alias's columns: ... ) t(a, b),
        WITH [RECURSIVE] cte(a, b)."""
        first = self.name_start(toks, i)
        before, before2 = at(toks, first - 1), at(toks, first - 2)
        if is_word(before, 'function', 'procedure', 'aggregate', 'routine'):
            return not is_word(before2, 'execute')
        if 'signature list' in context and is_punct(before, ',') and depth[first] == 0:
            return True
        if is_word(before, 'table', 'into', 'references', 'view', 'type', 'as', 'with',
                   'recursive') or is_punct(before, ')'):
            return True
        return 'relation list' in context and is_word(before, 'on', 'only', 'using')

    def call(self, toks, i, depth, opener, context):
        t = toks[i]
        first = self.name_start(toks, i)
        name = '.'.join(x.value for x in toks[first:i + 1:2])
        if self.ddl_name(toks, i, depth, context):
            return
        if first < i:
            if toks[first].value not in SCHEMAS:
                self.report(t, f'{name}(...) is qualified by {toks[first].value}: call into '
                               f'{", ".join(sorted(SCHEMAS))} only')
            return
        if not t.quoted and t.value in NOT_CALLS:
            return  # grammar (the hidden operators of IN, NULLIF ... are reported apart)
        before, k = at(toks, i - 1), opener[i]
        if not t.quoted and t.value in TYPMOD_TYPES and (
                is_name(before) or
                is_word(before, 'constant', 'setof', 'returns', 'out', 'inout', 'variadic') or
                is_punct(before, '(', ',') and k is not None and k > 0 and
                toks[k - 1].kind == 'ident' and self.ddl_name(toks, k - 1, depth, context)):
            return  # numeric(10, 2) after a column, parameter or variable name, or in a signature
        self.report(t, f'unqualified call {name}(...): write pg_catalog.{name}(...) '
                       f'(or @extschema@. / pgsem.)')

    def hidden_operator(self, toks, i):
        t, before, after = toks[i], at(toks, i - 1), at(toks, i + 1)
        word = t.value
        if word == 'nullif' and is_punct(after, '('):
            self.report(t, 'NULLIF compares with = through the search_path: write CASE '
                           'WHEN a OPERATOR(pg_catalog.=) b THEN NULL ELSE a END')
        elif word == 'in' and is_punct(after, '('):
            j = i - 1  # FOR a, b IN (query) is a loop, not a comparison
            while at(toks, j) is not None and not is_word(toks[j], 'for') and \
                    (toks[j].kind == 'ident' or is_punct(toks[j], ',', '.')):
                j -= 1
            if not is_word(at(toks, j), 'for', 'foreach'):
                self.report(t, 'IN (...) compares with = through the search_path: write '
                               'OPERATOR(pg_catalog.=) ANY (ARRAY[...]) or (SELECT ...)')
        elif word in ('between', 'similar', 'ilike') or \
                word == 'like' and not is_punct(before, '(', ','):  # CREATE TABLE t (LIKE u)
            self.report(t, f'{word.upper()} compares through the search_path: write it with '
                           'OPERATOR(pg_catalog.x)')
        elif word == 'distinct' and (is_word(before, 'is') or
                                     is_word(before, 'not') and is_word(at(toks, i - 2), 'is')):
            self.report(t, 'IS DISTINCT FROM compares with = through the search_path')
        elif word == 'case' and after is not None and not is_word(after, 'when') and \
                not is_word(before, 'end'):
            self.report(t, 'CASE x WHEN compares with = through the search_path: write CASE '
                           'WHEN x OPERATOR(pg_catalog.=) ...')


def check_text(name, text):
    checker = Checker(name)
    try:
        checker.sql(lex(text))
    except ValueError as e:
        checker.findings.append(f'{name}:{e}')
    return checker.findings


# ---------------------------------------------------------------------------------------------
# Its own examples: (SQL, how many findings). Checked before the scripts, so that a change here
# that stops seeing something fails loudly.
# ---------------------------------------------------------------------------------------------

EXAMPLES = [
    # what pgsem--1.0--1.1.sql's DO block did before the mend, and the mend
    ("DO $u$ DECLARE d text; BEGIN SELECT string_agg(x, ', ') INTO d FROM t "
     "WHERE refobjid = 'f()'::regprocedure AND deptype = 'n'; END $u$;", 3),
    ("DO $u$ BEGIN SELECT pg_catalog.string_agg(x, ', ') INTO d FROM t "
     "WHERE refobjid OPERATOR(pg_catalog.=) 'f()'::regprocedure; END $u$;", 0),
    ("DO $u$ BEGIN IF a <> (SELECT b) THEN x := 1; END IF; END $u$;", 1),
    ("DO $$ BEGIN FOR g IN SELECT bool_or(y) FROM t WHERE r = 0 LOOP NULL; END LOOP; END $$;", 2),
    ("SELECT a || b, -c, a + 1, x->>'k', a < b, a >= b, a != b;", 7),
    ("SELECT -1, f(-2), CASE WHEN a THEN -3 END, a OPERATOR(pg_catalog.-) -4;", 1),  # f
    ("SELECT a OPERATOR(public.=) b, a OPERATOR(=) b;", 2),
    ("SELECT x IN (1, 2), y NOT IN (SELECT 1), z BETWEEN 1 AND 2, w LIKE 'a%', NULLIF(a, b), "
     "a IS DISTINCT FROM b, CASE q WHEN 1 THEN 2 END;", 7),
    ("SELECT COALESCE(a, b), GREATEST(a, b), LEAST(a, b), EXISTS (SELECT 1), "
     "CAST(a AS numeric(10, 2)), ROW(1, 2), ARRAY(SELECT 1), t.*, "
     "pg_catalog.count(*) FILTER (WHERE a IS NULL), CASE WHEN a IS NOT NULL THEN 1 ELSE 0 END "
     "FROM (VALUES (1)) v(a), pg_catalog.f() AS w(x);", 0),
    ("SELECT now(), public.f(1), \"Mixed\"(1), @extschema@.f(1), pgsem.f(2);", 3),
    ("SELECT '=<>' AS s, E'\\' = ' AS e, $q$ a = b $q$ AS d, \"a=b\" -- a = b\n"
     "/* x = /* y */ = */;", 0),
    ("CREATE FUNCTION @extschema@.f(a numeric(10, 2) DEFAULT 1, b int = 2, c int DEFAULT -1) "
     "RETURNS int AS 'MODULE_PATHNAME', 'f' LANGUAGE C SET search_path = pg_catalog, pg_temp;", 0),
    ("CREATE FUNCTION g(a int = 1 + 1, b int DEFAULT abs(2)) RETURNS int LANGUAGE sql "
     "AS $$ SELECT a = b $$;", 3),
    ("CREATE FUNCTION h() RETURNS int LANGUAGE plpgsql AS 'BEGIN RETURN upper(''x''); END';", 1),
    ("COMMENT ON FUNCTION @extschema@.f(text, integer) IS 'a = b';"
     "REVOKE ALL ON FUNCTION f(int), g(int) FROM PUBLIC; DROP FUNCTION f(numeric(3));"
     "GRANT EXECUTE ON FUNCTION pgsem.f(int) TO PUBLIC;"
     "ALTER FUNCTION f(int) CALLED ON NULL INPUT;", 0),
    ("CREATE TABLE pgsem.t (a numeric(10, 2) NOT NULL DEFAULT 0, b text COLLATE \"C\", "
     "CONSTRAINT k PRIMARY KEY (a), CHECK (a > 0), c timestamptz DEFAULT now());"
     "CREATE UNIQUE INDEX i ON pgsem.t USING btree (a) WHERE b IS NULL;"
     "INSERT INTO pgsem.t (a) VALUES (1);", 2),
    ("CREATE VIEW @extschema@.v AS SELECT c.x::pg_catalog.regrole AS r, c.y::double precision, "
     "c.z::timestamp(3) with time zone, c.w::text[] FROM pgsem.f() c WHERE c.a = 1;", 1),
    ("CREATE TRIGGER t BEFORE INSERT ON pgsem.c FOR EACH ROW EXECUTE FUNCTION skip();", 1),
    ("CREATE TRIGGER t BEFORE INSERT ON pgsem.c FOR EACH ROW EXECUTE FUNCTION pgsem.skip();", 0),
    ("CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = regclass, FUNCTION = public.f);", 0),
    ("WITH RECURSIVE c(n) AS (SELECT 1) "
     "INSERT INTO pgsem.t VALUES (1) ON CONFLICT (id) DO NOTHING;", 0),
    ("SET LOCAL search_path = pg_catalog, pg_temp;"
     "UPDATE pgsem.t SET a = 1, b = 2 WHERE c = 3;", 1),
    ("DO $$ DECLARE a int = 1; b int := 2; c pg_catalog.pg_proc.oid%TYPE; BEGIN a = 3; b := a; "
     "GET STACKED DIAGNOSTICS a = PG_EXCEPTION_DETAIL; <<l>> LOOP EXIT l; END LOOP; "
     "RAISE EXCEPTION 'x %', a USING ERRCODE = 'P0001', HINT = 'h' 'i'; "
     "EXCEPTION WHEN OTHERS THEN a := 4; END $$;", 0),
    ("DO $$ DECLARE a int := abs(1); BEGIN IF a = 1 THEN a := 2; ELSE a := lower(b); END IF; "
     "RAISE NOTICE '%', upper(a) USING HINT = a || 'x'; END $$;", 5),
    ("DO $$ BEGIN EXECUTE pg_catalog.format('ALTER FUNCTION %s OWNER TO %I', a, b) USING c; "
     "FOR r IN (SELECT 1) LOOP NULL; END LOOP; END $$;", 0),
    ("DO LANGUAGE plperl $$ 1 $$;", 1),
    ("\\echo Use \"CREATE EXTENSION x\" to load this file. \\quit\nSELECT 1;", 0),
]


def self_test():
    bad = []
    for sql, expected in EXAMPLES:
        found = check_text('example', sql)
        if len(found) != expected:
            bad.append(f'{len(found)} findings, not {expected}, in: {sql}\n    ' +
                       '\n    '.join(found))
    return bad


def main(paths):
    bad = self_test()
    if bad:
        for b in bad:
            print(f'FAILED: sql_qualified.py example: {b}')
        return 2
    paths = paths or sorted(glob.glob(os.path.join(ROOT, 'pgsem--*.sql')))
    findings = []
    for path in paths:
        with open(path, encoding='utf-8') as f:
            name = os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path
            findings += check_text(name, f.read())
    for finding in findings:
        print(f'FAILED: {finding}')
    print(f'sql-qualified: {len(paths)} scripts, {len(findings)} findings')
    return 1 if findings or not paths else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
