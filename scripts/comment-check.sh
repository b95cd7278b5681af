#!/bin/bash
# comment-check.sh: every function, file and counter that a comment of the
# driver, of its KUnit tests or of the uapi header, or a page of
# Documentation/, names must exist, so that a comment cannot go on naming
# what was renamed or removed.
#
#   scripts/comment-check.sh
#
# What is checked, in the comments of drivers/infiniband/sw/shca/*.[ch],
# kunit/*.c and include/uapi/rdma/shca-abi.h, and in the whole text of
# Documentation/*.rst:
#   - a function: shca_NAME followed by "()" must be a name that the
#     code (comments left out) of drivers/, kunit/, include/ or
#     providers/shca/ uses;
#   - a file: NAME.c or NAME.h, with or without a folder, must be a file of
#     the repository (the folder, where given, is its path's end), unless
#     it is a kernel or library header: one whose folder is one of the
#     system's include folders (linux/, rdma/, net/, infiniband/, ...) or
#     that the code includes with <...>;
#   - a name in capitals (shca_NAME(), NAME.c) is a placeholder, and a
#     glob (*_logic.h) no file: neither is checked;
#   - a counter: a word shaped like the driver's counter names (a family
#     of the counter table, drivers/infiniband/sw/shca/stats.h, then "_"
#     and more) must be a counter of that table or a name that the code
#     uses.
# And the other way: every counter of that table is described in the man
# page, Documentation/shca.7 (and its names there are checked as above).
# Prints each name that does not exist, with its file and line, and exits
# 1 if there is any; else prints "comment-check: N names, all exist".
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$top"

exec python3 - <<'EOF'
import os
import re
import subprocess
import sys

DRV = "drivers/infiniband/sw/shca"
try:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"],
                           capture_output=True, text=True,
                           check=True).stdout.split()
except (OSError, subprocess.CalledProcessError):
    # no git checkout: the source folders, without build output
    files = []
    for root in ('drivers', 'kunit', 'include', 'providers', 'scripts',
                 'Documentation'):
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x != 'build']
            files += [os.path.join(d, n) for n in names]
files = [f for f in files if os.path.isfile(f)]

COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def strip_comments(text):
    """The code of a C file: comments blanked, strings kept."""
    out, pos = [], 0
    for m in re.finditer(r'"(?:\\.|[^"\\\n])*"|/\*.*?\*/|//[^\n]*', text, re.S):
        out.append(text[pos:m.start()])
        if m.group(0).startswith('"'):
            out.append(m.group(0))
        else:
            out.append(re.sub(r'[^\n]', ' ', m.group(0)))
        pos = m.end()
    out.append(text[pos:])
    return ''.join(out)


def comments(text):
    """(line, comment text) of each comment of a C file."""
    code = strip_comments(text)
    for m in re.finditer(r'/\*.*?\*/|//[^\n]*', text, re.S):
        # a comment inside a string was kept in the code: not a comment
        if code[m.start():m.start() + 2] in ('/*', '//'):
            continue
        yield text.count('\n', 0, m.start()) + 1, m.group(0)


# the names the code uses, and the headers it includes with <...>
code_names = set()
sys_headers = set()
code_roots = (DRV + '/', 'kunit/', 'include/', 'providers/shca/')
for f in files:
    if not f.startswith(code_roots) or not re.search(r'\.[ch]$', f):
        continue
    code = strip_comments(open(f, errors='replace').read())
    code_names.update(re.findall(r'\b[A-Za-z_]\w*\b', code))
    for h in re.findall(r'#\s*include\s*<([^>]+)>', code):
        sys_headers.add(h)
        sys_headers.add(os.path.basename(h))

# the counter table: names and their families
stats = open(DRV + '/stats.h').read()
counters = set(re.findall(r'SHCA_STAT\(\w+,\s*"(\w+)"\)', stats))
families = sorted({c.split('_')[0] for c in counters})
# a counter-shaped word: not a member (->x, .x), a path's part, a file's
# stem, an option (--x, -x) or a call
COUNTER = re.compile(r'(?<![\w>./-])(?:%s)_[a-z0-9_]*[a-z0-9](?![\w./(-])'
                     % '|'.join(families))

# the names the tests and tools use (the e2e programs read the counters)
# and the stems of the repository's files (tm_stress, qp_scale, ...)
tool_names = set()
for f in files:
    if f.startswith('scripts/') and os.path.isfile(f):
        tool_names.update(re.findall(r'\b[a-z_][a-z0-9_]*\b',
                                     open(f, errors='replace').read()))
    tool_names.add(os.path.basename(f).split('.')[0])
# the kernel's names of that shape that comments speak of
tool_names.update(['mmap_lock'])

SYS_DIRS = ('linux/', 'rdma/', 'net/', 'uapi/', 'asm/', 'kunit/test',
            'infiniband/', 'sys/', 'netinet/', 'arpa/', 'trace/')
repo_paths = set(files)
repo_base = {os.path.basename(f) for f in files}

FUNC = re.compile(r'\b(shca_\w+)\(\)')
# (a glob, *_logic.h, is no file; a name in capitals, NAME.c, is a placeholder)
FILE = re.compile(r'(?<![\w/.*-])((?:[\w.-]+/)*[\w-]+\.[ch])(?![\w])')
PLACEHOLDER = re.compile(r'^(?:shca_)?[A-Z][A-Z0-9_]*$')


def file_ok(name):
    base = os.path.basename(name)
    if '/' in name:
        if name.startswith(SYS_DIRS) or name in sys_headers:
            return True
        return any(p == name or p.endswith('/' + name) for p in repo_paths)
    return base in repo_base or base in sys_headers


bad = []
checked = 0


def check(path, line, text):
    global checked
    for m in FUNC.finditer(text):
        checked += 1
        if m.group(1) not in code_names and \
           not PLACEHOLDER.match(m.group(1)):
            bad.append((path, line + text.count('\n', 0, m.start()),
                        'function', m.group(1) + '()'))
    for m in FILE.finditer(text):
        checked += 1
        stem = os.path.basename(m.group(1))[:-2]
        if not file_ok(m.group(1)) and not PLACEHOLDER.match(stem):
            bad.append((path, line + text.count('\n', 0, m.start()),
                        'file', m.group(1)))
    for m in COUNTER.finditer(text):
        w = m.group(0)
        checked += 1
        if w not in counters and w not in code_names and \
           w not in tool_names:
            bad.append((path, line + text.count('\n', 0, m.start()),
                        'counter', w))


for f in sorted(files):
    c_src = (f.startswith(DRV + '/') and re.search(r'\.[ch]$', f)) or \
            (f.startswith('kunit/') and f.endswith('.c')) or \
            f == 'include/uapi/rdma/shca-abi.h'
    if c_src:
        for line, text in comments(open(f, errors='replace').read()):
            check(f, line, text)
    elif f.startswith('Documentation/') and f.endswith('.rst'):
        check(f, 1, open(f, errors='replace').read())

man = open('Documentation/shca.7', errors='replace').read()
check('Documentation/shca.7', 1, man)
man_words = set(re.findall(r'\b\w+\b', man))
for c in sorted(counters):
    checked += 1
    if c not in man_words:
        bad.append(('Documentation/shca.7', 1, 'description of counter', c))

for path, line, kind, name in bad:
    print(f"{path}:{line}: no such {kind}: {name}")
if bad:
    print(f"comment-check: {len(bad)} of {checked} names do not exist",
          file=sys.stderr)
    sys.exit(1)
print(f"comment-check: {checked} names, all exist")
EOF
