import os, re, sys, subprocess
root, old, new = sys.argv[1], sys.argv[2], sys.argv[3]   # old/new are dir = package names
mod = "github.com/expd/expd/"
files = subprocess.check_output(["git", "ls-files", "*.go"], cwd=root, text=True).split()
for f in files:
    p = os.path.join(root, f)
    if f.startswith("sdk/"): continue
    s = open(p).read(); o = s
    if os.path.dirname(f) == new:  # already git-mv'd
        s = re.sub(r'^package %s(_test)?\b' % old, lambda m: "package " + new + (m.group(1) or ""), s, count=1, flags=re.M)
    if '"%s%s"' % (mod, old) in s:
        s = s.replace('"%s%s"' % (mod, old), '"%s%s"' % (mod, new))
        s = re.sub(r'(?<!\w)(?<!\w\.)%s\.(?=[A-Z])' % old, new + ".", s)
    if s != o:
        open(p, "w").write(s)
