import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { EnvSpec, Requirement } from '../../src/env/types.js';

/**
 * A PEP 503 index on 127.0.0.1 serving distributions the test builds (never the internet), and the builder of
 * those distributions: wheels (a zip of the package, METADATA, WHEEL and RECORD) and source distributions whose
 * in-tree build backend is the test's own Python code, which is how a setup.py's code runs during a build.
 */
export interface DistSpec {
  name: string;
  version: string;
  /** Requires-Dist lines (`beta>=1`). */
  requires?: string[];
  /** Wheel file name tag part. @defaultValue 'py3-none-any' */
  tag?: string;
  /** Source distribution with this build backend body (Python, defines build_wheel etc.) instead of a wheel. */
  backend?: string;
  /** The module's `__init__.py`. */
  init?: string;
  /** More files of the wheel, by path (`pkg_resources/__init__.py`: a second top-level module). */
  files?: Record<string, string>;
}

const MAKE_DISTS = String.raw`
import base64, hashlib, io, json, os, sys, tarfile, zipfile
out, specs = sys.argv[1], json.loads(sys.argv[2])
def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
def metadata(s):
    lines = ["Metadata-Version: 2.1", "Name: " + s["name"], "Version: " + s["version"]]
    lines += ["Requires-Dist: " + r for r in s.get("requires", [])]
    return "\n".join(lines) + "\n"
for s in specs:
    mod = s["name"].replace("-", "_")
    if "backend" in s:
        base = "%s-%s" % (mod, s["version"])
        files = {
            "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n[project]\nname = "%s"\nversion = "%s"\n' % (s["name"], s["version"]),
            "PKG-INFO": metadata(s),
            "backend.py": s["backend"],
        }
        with tarfile.open(os.path.join(out, base + ".tar.gz"), "w:gz") as tar:
            for name, text in files.items():
                data = text.encode()
                info = tarfile.TarInfo(base + "/" + name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        continue
    dist = "%s-%s.dist-info" % (mod, s["version"])
    files = {
        mod + "/__init__.py": s.get("init", "__version__ = %r\n" % s["version"]),
        dist + "/METADATA": metadata(s),
        dist + "/WHEEL": "Wheel-Version: 1.0\nGenerator: repgen-test\nRoot-Is-Purelib: true\nTag: %s\n" % s.get("tag", "py3-none-any"),
    }
    files.update(s.get("files", {}))
    record = "".join("%s,%s,%d\n" % (n, record_hash(t.encode()), len(t.encode())) for n, t in files.items()) + dist + "/RECORD,,\n"
    files[dist + "/RECORD"] = record
    with zipfile.ZipFile(os.path.join(out, "%s-%s-%s.whl" % (mod, s["version"], s.get("tag", "py3-none-any"))), "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
`;

/** Builds the distributions into `dir` with the real Python (zipfile, tarfile). */
export function makeDists(dir: string, specs: DistSpec[], python = '/usr/bin/python3'): void {
  const script = join(dir, '.make-dists.py');
  writeFileSync(script, MAKE_DISTS);
  execFileSync(python, ['-I', script, dir, JSON.stringify(specs)]);
}

/**
 * A backend (the body of an sdist's build) that builds a wheel holding `module/__init__.py` = `init`; `prelude`
 * runs first, as a setup.py's top level would.
 */
export function backendSource(name: string, version: string, prelude: string, init = 'x = 1'): string {
  const mod = name.replace(/-/g, '_');
  return `
import base64, hashlib, os, zipfile
${prelude}
def _h(d):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
def get_requires_for_build_wheel(config_settings=None):
    return []
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    dist = "${mod}-${version}.dist-info"
    files = {"${mod}/__init__.py": INIT, dist + "/METADATA": "Metadata-Version: 2.1\\nName: ${name}\\nVersion: ${version}\\n",
             dist + "/WHEEL": "Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}
    rec = "".join("%s,%s,%d\\n" % (n, _h(t.encode()), len(t.encode())) for n, t in files.items()) + dist + "/RECORD,,\\n"
    files[dist + "/RECORD"] = rec
    fn = "${mod}-${version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, fn), "w") as z:
        for n, t in files.items():
            z.writestr(n, t)
    return fn
INIT = globals().get("INIT", ${JSON.stringify(init)})
`;
}

export interface LoopbackIndex {
  /** `http://127.0.0.1:PORT/simple` */
  url: string;
  /** Every request path, in order. */
  requests: string[];
  close(): Promise<void>;
}

function normalise(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** Serves every file of `dir` under /files/ and a /simple/ page per project (names read from the file names). */
export async function startLoopbackIndex(dir: string): Promise<LoopbackIndex> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push(path);
    const files = readdirSync(dir).filter((f) => f.endsWith('.whl') || f.endsWith('.tar.gz'));
    const project = /^\/simple\/([^/]+)\/?$/.exec(path);
    if (project) {
      const name = normalise(project[1] as string);
      const mine = files.filter((f) => normalise((/^(.+?)-\d/.exec(f)?.[1] ?? '') as string) === name);
      if (mine.length === 0) return void res.writeHead(404).end('not found');
      const links = mine.map((f) => {
        const sha = createHash('sha256')
          .update(readFileSync(join(dir, f)))
          .digest('hex');
        return `<a href="/files/${f}#sha256=${sha}">${f}</a>`;
      });
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!DOCTYPE html><html><body>\n${links.join('\n')}\n</body></html>\n`);
      return;
    }
    const file = /^\/files\/([^/?#]+)$/.exec(path);
    if (file && files.includes(file[1] as string)) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(readFileSync(join(dir, file[1] as string)));
      return;
    }
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/simple`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A requirement of the repository's, as the spec function makes one. */
export function requirement(name: string, specifier = ''): Requirement {
  return { name, specifier, extras: [], source: 'repo', why: 'test' };
}

/** An env spec resolving `requirements` from the loopback index alone. */
export function indexSpec(index: Pick<LoopbackIndex, 'url'>, requirements: Requirement[], extra: Partial<EnvSpec> = {}): EnvSpec {
  return {
    python: null,
    pythonWhy: null,
    requirements,
    project: null,
    indexUrl: index.url,
    extraIndexUrls: [],
    findLinks: [],
    excludeNewer: null,
    buildCommands: [],
    notes: [],
    ...extra,
  };
}
