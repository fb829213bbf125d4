#!/usr/bin/env python3
"""install.py — the Go toolchain go.mod asks for, in troupe's own cache.

    python3 scripts/go/install.py            # install it unless `go` on PATH is new enough
    python3 scripts/go/install.py --always   # install it into the cache in any case
    python3 scripts/go/install.py --where    # print the cached toolchain's go, or exit 1

Go is published on the Go module proxy as the module golang.org/toolchain
(version v0.0.1-go<VERSION>.<os>-<arch>), a zip whose files are the GOROOT.
This downloads that zip from the first proxy in GOPROXY (default
https://proxy.golang.org), verifies it against the h1: hash pinned in
scripts/go/toolchain.sum (the hash the Go checksum database records, the
same check `go mod download` makes) and unpacks it into
$TROUPE_GO_DIR (default ~/.cache/troupe/go)/go<VERSION>.<os>-<arch>/,
atomically: a partial download or unpack is never taken for a toolchain.
scripts/go/go then runs it (the Makefile's GO), so nothing is added to PATH.

What it is not: a general Go installer. It installs the one version go.mod
names, for Linux on amd64 or arm64, and refuses any other.
"""
import base64
import hashlib
import io
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUMS = os.path.join(ROOT, "scripts", "go", "toolchain.sum")


def die(msg):
    print(f"go-toolchain: {msg}", file=sys.stderr)
    sys.exit(1)


def wanted_version():
    """go.mod's toolchain line if it has one, else its go line (1.26.8)."""
    go = toolchain = None
    with open(os.path.join(ROOT, "go.mod"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2 and parts[0] == "go":
                go = parts[1]
            if len(parts) == 2 and parts[0] == "toolchain" and parts[1].startswith("go"):
                toolchain = parts[1][2:]
    v = toolchain or go
    if not v or not re.fullmatch(r"\d+\.\d+(\.\d+)?", v):
        die(f"go.mod names no Go release (a 'go 1.x.y' line), got {v!r}")
    return v


def platform_name():
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    if sys.platform != "linux" or arch is None:
        die(f"no pinned Go toolchain for {sys.platform}/{platform.machine()}; install Go {wanted_version()} yourself and put it on PATH")
    return f"linux-{arch}"


def version_key(v):
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3]) + (0,) * (3 - len(re.findall(r"\d+", v)[:3]))


def path_go_version():
    """The version of `go` on PATH ("1.26.8"), or None when there is none."""
    go = shutil.which("go")
    if not go:
        return None
    env = dict(os.environ, GOTOOLCHAIN="local")
    try:
        out = subprocess.run([go, "version"], cwd="/", env=env, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"go version go(\d+\.\d+(?:\.\d+)?)", out)
    return m.group(1) if m else None


def cache_root():
    d = os.environ.get("TROUPE_GO_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "troupe", "go")
    return os.path.abspath(d)


def pinned_hash(module_version):
    with open(SUMS, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "golang.org/toolchain" and parts[1] == module_version:
                return parts[2]
    die(f"{SUMS} pins no hash for golang.org/toolchain {module_version}; add the checksum database's line (see the file's header)")


def dirhash_h1(zf):
    """Go's dirhash.Hash1 of a module zip: sha256 over "<sha256 hex>  <name>\\n" per file, sorted by name."""
    lines = []
    for name in sorted(i.filename for i in zf.infolist() if not i.is_dir()):
        if "\n" in name:
            die(f"the toolchain zip holds a file name with a newline: {name!r}")
        lines.append(f"{hashlib.sha256(zf.read(name)).hexdigest()}  {name}\n")
    return "h1:" + base64.b64encode(hashlib.sha256("".join(lines).encode()).digest()).decode()


def proxy_url():
    for p in re.split(r"[,|]", os.environ.get("GOPROXY", "https://proxy.golang.org")):
        p = p.strip()
        if p.startswith("https://") or p.startswith("http://"):
            return p.rstrip("/")
    return "https://proxy.golang.org"


def download(url):
    """The body of url, saying every few seconds how far it is."""
    try:
        resp = urllib.request.urlopen(url, timeout=20)
    except Exception as e:  # urllib raises several unrelated types
        die(f"cannot download {url}: {e} (no network? set GOPROXY to a reachable proxy, or install Go yourself)")
    total = int(resp.headers.get("Content-Length") or 0)
    buf, last = io.BytesIO(), time.monotonic()
    while True:
        chunk = resp.read(1 << 20)
        if not chunk:
            break
        buf.write(chunk)
        if time.monotonic() - last > 5:
            last = time.monotonic()
            of = f" of {total >> 20} MiB" if total else ""
            print(f"  … still downloading Go ({buf.tell() >> 20} MiB{of})", flush=True)
    return buf.getvalue()


def install(version, plat):
    module_version = f"v0.0.1-go{version}.{plat}"
    want = pinned_hash(module_version)
    dest = os.path.join(cache_root(), f"go{version}.{plat}")
    url = f"{proxy_url()}/golang.org/toolchain/@v/{module_version}.zip"
    print(f"go-toolchain: installing Go {version} ({plat}) into {dest} from {url} (~70 MB)", flush=True)
    data = download(url)
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        die(f"{url} is not a zip file ({len(data)} bytes)")
    got = dirhash_h1(zf)
    if got != want:
        die(f"golang.org/toolchain {module_version}: hash {got} differs from the pinned {want} (scripts/go/toolchain.sum): not installed")
    prefix = f"golang.org/toolchain@{module_version}/"
    os.makedirs(cache_root(), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f".go{version}.", dir=cache_root())
    try:
        for info in zf.infolist():
            if not info.filename.startswith(prefix):
                die(f"unexpected file outside {prefix} in the toolchain zip: {info.filename}")
            rel = info.filename[len(prefix):]
            if not rel or rel.startswith("/") or ".." in rel.split("/"):
                continue
            target = os.path.join(tmp, rel)
            if info.is_dir():
                os.makedirs(target, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as out:
                out.write(zf.read(info))
            mode = (info.external_attr >> 16) & 0o777
            # module zips carry no modes: programs are bin/* and pkg/tool/*/*
            # (what the go command itself marks executable when it switches toolchains)
            if mode & 0o111 or rel.startswith("bin/") or rel.startswith("pkg/tool/"):
                os.chmod(target, 0o755)
            else:
                os.chmod(target, 0o644)
        with open(os.path.join(tmp, ".complete"), "w") as f:
            f.write(f"golang.org/toolchain {module_version} {want}\n")
        if os.path.exists(dest):
            shutil.rmtree(dest)
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    go = os.path.join(dest, "bin", "go")
    out = subprocess.run([go, "version"], cwd="/", env=dict(os.environ, GOTOOLCHAIN="local"), capture_output=True, text=True)
    if out.returncode != 0:
        die(f"the installed {go} does not run: {out.stderr.strip()}")
    print(f"go-toolchain: {out.stdout.strip()} in {dest}", flush=True)
    return go


def cached(version, plat):
    dest = os.path.join(cache_root(), f"go{version}.{plat}")
    go = os.path.join(dest, "bin", "go")
    marker = os.path.join(dest, ".complete")
    if os.access(go, os.X_OK) and os.path.isfile(marker):
        with open(marker, encoding="utf-8") as f:
            if f.read().split()[-1:] == [pinned_hash(f"v0.0.1-go{version}.{plat}")]:
                return go
    return None


def main(argv):
    mode = argv[1] if len(argv) > 1 else ""
    if mode not in ("", "--always", "--where"):
        die(f"unknown argument {mode} (none, --always or --where)")
    version = wanted_version()
    plat = platform_name()
    have = cached(version, plat)
    if mode == "--where":
        if have:
            print(have)
            return 0
        return 1
    if mode == "":
        v = path_go_version()
        if v and version_key(v) >= version_key(version):
            print(f"go-toolchain: go {v} on PATH is new enough for go.mod's {version}")
            return 0
        if have:
            print(f"go-toolchain: Go {version} is installed in {os.path.dirname(os.path.dirname(have))}"
                  + (f" (PATH has go {v}, older than go.mod's)" if v else " (no go on PATH)"))
            return 0
        print(f"go-toolchain: {'go ' + v + ' on PATH is older than' if v else 'no go on PATH; need'} go.mod's {version}", flush=True)
    elif have:
        print(f"go-toolchain: Go {version} is installed in {os.path.dirname(os.path.dirname(have))}")
        return 0
    install(version, plat)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
