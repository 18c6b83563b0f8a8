import os, re, subprocess
mod = "github.com/expd/expd/"
M = {  # database.X -> (owner package dir, new name)
 "ExperimentVersion": ("experiments", "VersionRow"),
 "Experiment": ("experiments", "Row"),
 "APIKey": ("keys", "APIKey"), "KeyAudit": ("keys", "KeyAudit"),
 "Org": ("orgs", "Org"), "User": ("orgs", "User"), "Membership": ("orgs", "Membership"), "Plan": ("orgs", "Plan"),
 "Assignment": ("assignments", "Assignment"),
 "Event": ("ingest", "EventRow"),
 "IssuedManagementToken": ("mgmttokens", "IssuedToken"), "ManagementTokenList": ("mgmttokens", "TokenList"),
 "ManagementToken": ("mgmttokens", "Token"),
 "TokenLive": ("mgmttokens", "TokenLive"), "TokenRevoked": ("mgmttokens", "TokenRevoked"), "TokenExpired": ("mgmttokens", "TokenExpired"),
}
files = subprocess.check_output(["git", "ls-files", "*.go"], text=True).split()
for f in files:
    if f.startswith("sdk/") or not os.path.exists(f): continue
    s = open(f).read(); o = s
    if '"%sdatabase"' % mod not in s: continue
    pkg = re.search(r'^package (\w+)', s, re.M).group(1)
    d = os.path.dirname(f)
    need = set()
    def rep(m):
        owner, new = M[m.group(1)]
        if d == owner and pkg == owner: return new
        need.add(owner); return owner + "." + new
    s = re.sub(r'(?<!\w)(?<!\w\.)database\.(%s)\b' % "|".join(sorted(M, key=len, reverse=True)), rep, s)
    if s == o: continue
    if not re.search(r'(?<!\w)(?<!\w\.)database\.[A-Z]', s):
        s = s.replace('\t"%sdatabase"\n' % mod, "", 1)
    for owner in need:
        if '"%s%s"' % (mod, owner) not in s:
            # add next to another expd import, else a new block after the first import line
            m = re.search(r'^\t"%s[^"]+"\n' % re.escape(mod), s, re.M)
            if m: s = s[:m.start()] + '\t"%s%s"\n' % (mod, owner) + s[m.start():]
            else:
                m = re.search(r'^import \(\n', s, re.M)
                s = s[:m.end()] + '\t"%s%s"\n\n' % (mod, owner) + s[m.end():]
    open(f, "w").write(s)
    print(f, sorted(need))
