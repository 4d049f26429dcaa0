#!/bin/sh
# The Docker build context docs/containers.md makes (docker build -f
# packaging/container/Dockerfile .) holds the packages the Dockerfile
# copies and nothing else: .dockerignore excludes everything ('*' first),
# then lists each COPY source as an exception.  The context is computed
# here as Docker's documented rules make it (patterns matched with Go's
# filepath.Match, where '*' and '?' stop at '/', '**' crosses it; the last
# matching line decides; an excluded directory excludes what is under it
# unless an exception names something inside it), over the tree's files
# and what make, make demo and build-debs.sh leave in build/.
# Exit 0 pass, 1 fail, 77 skip (no python3).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
command -v python3 >/dev/null || { echo "SKIP: python3 is missing"; exit 77; }
python3 - "$top" <<'PY'
import os, re, sys

top = sys.argv[1]
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def regex(pattern):
    out, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            if pattern.startswith("/", i):
                out, i = out + "(?:/|)", i + 1
            continue
        out += {"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c))
        i += 1
    return re.compile(out + r"\Z")


def read_ignore(path):
    rules = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            neg = line.startswith("!")
            pat = os.path.normpath(line[1:] if neg else line).lstrip("/")
            rules.append((neg, pat, regex(pat)))
    return rules


def excluded(rel, rules):
    """Docker's verdict for rel: each pattern matches the path or one of
    its parent directories; the last matching rule wins."""
    parts = rel.split("/")
    verdict = False
    for neg, _, rx in rules:
        for k in range(len(parts), 0, -1):
            if rx.match("/".join(parts[:k])):
                verdict = not neg
                break
    return verdict


try:
    rules = read_ignore(os.path.join(top, ".dockerignore"))
except OSError as e:
    rules = []
    check(False, "no .dockerignore: %s" % e)
check(rules and rules[0][1] == "*" and not rules[0][0],
      ".dockerignore starts by excluding everything ('*')")
with open(os.path.join(top, "packaging", "container", "Dockerfile")) as f:
    sources = []
    for line in f:
        m = re.match(r"\s*(COPY|ADD)\s+(?:--\S+\s+)*(.*)", line)
        if m:
            sources += m.group(2).split()[:-1]
exceptions = {p for neg, p, _ in rules if neg}
check(sources, "the Dockerfile copies something")
for s in sources:
    check(s in exceptions, "COPY source %s has its exception in .dockerignore" % s)

# The tree as it is (its own build directories aside), with what
# build-debs.sh and make leave in build/.
paths = []
for root, dirs, files in os.walk(top):
    rel_root = os.path.relpath(root, top)
    if rel_root == ".":
        dirs[:] = [d for d in dirs if not d.startswith("build")]
    for name in files:
        paths.append(os.path.normpath(os.path.join(rel_root, name)))
paths += ["build/deb/libgdrapi2_0.1_amd64.deb",
          "build/deb/gdrmap-tools_0.1_amd64.deb",
          "build/deb/libgdrapi-dev_0.1_amd64.deb",
          "build/deb/dbgsym/libgdrapi2-dbgsym_0.1_amd64.deb",
          "build/lib/libgdrapi.so.2.6", "build/demo/vm/initramfs.cpio.gz"]
check(any(p.startswith(".git") for p in paths), "the tree has its .git")
sent = sorted(p for p in paths if not excluded(p, rules))
check(sent == ["build/deb/gdrmap-tools_0.1_amd64.deb",
               "build/deb/libgdrapi2_0.1_amd64.deb"],
      "the context is the two packages the image installs, not %s (%d files)"
      % (sent[:8], len(sent)))
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PY
