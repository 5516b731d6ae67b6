import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EnvSpec, ProjectInstall } from '../../src/env/types.js';

// A project with a C extension whose setup.py compiles it with gcc directly (no setuptools on a loopback-only
// machine), built in place by the env's interpreter inside the sandbox, as detectron2's `_C` would be.

export const SETUP_PY = `
import os, subprocess, sys, sysconfig
assert sys.argv[1:] == ["build_ext", "--inplace"], sys.argv
if os.environ.get("FAIL_ME") or os.path.exists("fail"):
    sys.exit("error: extension did not compile")
suffix = sysconfig.get_config_var("EXT_SUFFIX")
subprocess.check_call(["gcc", "-shared", "-fPIC", "-I" + sysconfig.get_paths()["include"], "csrc/ext.c", "-o", "pkg/_C" + suffix])
`;
export const EXT_C = `
#include <Python.h>
static struct PyModuleDef m = {PyModuleDef_HEAD_INIT, "_C", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__C(void) { PyObject *mod = PyModule_Create(&m); PyModule_AddIntConstant(mod, "answer", 42); return mod; }
`;

/** Writes such a project (package `pkg`, extension `pkg._C` from `csrc/ext.c`) into `dir`, and returns `dir`. */
export function writeCExtensionProject(dir: string): string {
  mkdirSync(join(dir, 'pkg'), { recursive: true });
  mkdirSync(join(dir, 'csrc'));
  writeFileSync(join(dir, 'setup.py'), SETUP_PY);
  writeFileSync(join(dir, 'csrc', 'ext.c'), EXT_C);
  writeFileSync(join(dir, 'pkg', '__init__.py'), '');
  return dir;
}

/** An env spec with nothing to resolve (its index unreachable on purpose): only the project, built from its checkout. */
export function projectOnlySpec(project: ProjectInstall, extra: Partial<EnvSpec> = {}): EnvSpec {
  return {
    python: null,
    pythonWhy: null,
    requirements: [],
    project,
    indexUrl: 'http://127.0.0.1:9/simple',
    extraIndexUrls: [],
    findLinks: [],
    excludeNewer: null,
    buildCommands: [],
    notes: [],
    ...extra,
  };
}
