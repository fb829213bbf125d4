#!/usr/bin/env python3
"""wheel_headers.py URL DEST — extracts torch/include/ from a torch wheel on
a web server into DEST (DEST/include/...), reading only the parts of the
archive it needs with HTTP range requests: the central directory at the end,
then the headers' stretch of the file (about 20 MB of a 530 MB wheel).

check-builds.sh uses it to compile the shim's CUDA build against the headers
of the torch the GPU machines run (2.11), without downloading the wheel.
Every extracted member is checked against the CRC-32 its archive records
(zipfile does this on read); the whole wheel's sha256 cannot be checked
without the whole wheel, so the URL is pinned in check-builds.sh instead.

Exit status 0 on success, 2 when the server cannot be reached (check-builds
then reports a skip), 1 on anything else.
"""
import io
import os
import sys
import urllib.error
import urllib.request
import zipfile

BLOCK = 4 << 20  # bytes per range request


class RemoteFile(io.RawIOBase):
    """A read-only, seekable view of a URL, fetched in cached blocks."""

    def __init__(self, url):
        self.url = url
        self.pos = 0
        self.blocks = {}
        req = urllib.request.Request(url, method="HEAD")
        with urllib.request.urlopen(req, timeout=60) as r:
            self.size = int(r.headers["Content-Length"])
        self.fetched = 0

    def seekable(self):
        return True

    def readable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = base + offset
        return self.pos

    def block(self, i):
        if i not in self.blocks:
            lo = i * BLOCK
            hi = min(self.size, lo + BLOCK) - 1
            req = urllib.request.Request(self.url, headers={"Range": f"bytes={lo}-{hi}"})
            with urllib.request.urlopen(req, timeout=120) as r:
                data = r.read()
            if len(data) != hi - lo + 1:
                raise OSError(f"range {lo}-{hi}: got {len(data)} bytes (does the server honour Range?)")
            self.blocks[i] = data
            self.fetched += len(data)
        return self.blocks[i]

    def readinto(self, b):
        n = min(len(b), self.size - self.pos)
        done = 0
        while done < n:
            i, off = divmod(self.pos + done, BLOCK)
            chunk = self.block(i)[off:off + n - done]
            b[done:done + len(chunk)] = chunk
            done += len(chunk)
        self.pos += n
        return n


def main():
    url, dest = sys.argv[1], sys.argv[2]
    try:
        remote = RemoteFile(url)
    except (urllib.error.URLError, OSError) as e:
        print(f"wheel_headers: cannot reach {url}: {e}", file=sys.stderr)
        sys.exit(2)
    with zipfile.ZipFile(io.BufferedReader(remote, buffer_size=1 << 16)) as z:
        members = sorted((m for m in z.infolist() if m.filename.startswith("torch/include/") and not m.is_dir()),
                         key=lambda m: m.header_offset)  # in archive order: the blocks are read once
        if not members:
            print("wheel_headers: no torch/include/ in the wheel", file=sys.stderr)
            sys.exit(1)
        for m in members:
            out = os.path.join(dest, m.filename[len("torch/"):])
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with z.open(m) as src, open(out, "wb") as f:  # raises on a CRC mismatch
                f.write(src.read())
    print(f"wheel_headers: {len(members)} headers from {os.path.basename(url)} "
          f"({remote.fetched >> 20} MiB fetched of {remote.size >> 20} MiB)")


if __name__ == "__main__":
    main()
