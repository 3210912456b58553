"""The servo law compiled ahead of time: a shared library that later processes load with
ctypes, without importing numba.

numba's own cache (``law.compiled``'s JIT path) still imports numba and rebuilds its
typing context in every process that loads it: about a second of Python holding the GIL
in chunks of tens of ms. Here numba compiles the law once, as a C-ABI function over raw
pointers (:func:`_step_pointers`: :func:`law._each_motor` with the results' table given
by the caller, so nothing allocates and numba's runtime is not needed), and the machine
code of the law's function (its LLVM module, every other function dropped: numba's
wrapper raising Python exceptions, its runtime's helpers) goes into an object file that
the system's C compiler links (``cc -shared``) with :data:`_SHIM`: a few lines of C,
built against the interpreter's and numpy's headers, that take the numpy arrays
themselves, check each one's type, shape and layout and hand their data to the law.
The library is kept in a cache directory (beside numba's: the package's
``__pycache__``, else the user's cache; ``SERVO_SIM_LAW_CACHE`` names another)
under a name that hashes the law's sources, numba's, llvmlite's and numpy's versions,
the interpreter and the CPU (:func:`key`): a changed law is never served an old library.

Where it cannot be built (no C compiler, a symbol other than the C library's left
undefined, no interpreter or numpy headers to build the shim against) :func:`runner`
gives None, with one debug line, and :func:`compiled` (what a bank steps with) gives
numba's JIT runner (``law.compiled``) instead.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import logging
import os
import platform
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from . import law, tables
from .law import servo_step
from .tables import (
    ANY_STARTING,
    COMMAND_ROWS,
    FLAG_COUNT,
    MASK_ROWS,
    PARAMETER_ROWS,
    RESULT_ROWS,
    STATE_ROWS,
)

log = logging.getLogger(__name__)

#: ``numba.carray`` in the namespace numba compiles the pointer functions in
carray: Any = None

#: the environment variable naming the library's cache directory
CACHE_ENV = "SERVO_SIM_LAW_CACHE"
#: ``SERVO_SIM_AHEAD=0``: no ahead-of-time library, numba's JIT runner (and nothing built)
AHEAD_ENV = "SERVO_SIM_AHEAD"

#: the C side, built against the running interpreter's and numpy's own headers
#: (``Python.h``; ``numpy/ndarraytypes.h``'s ``PyArrayObject_fields``, the layout numpy's C
#: API macros compile into every extension): it takes the arguments' tuple and reads
#: each array's fields, each argument checked (an ndarray itself, the dtype's
#: descriptor, dimensions, C order, writable where the law writes) before the law
#: (``servo_sim_law_step_inner``) reads it; -1: an argument it cannot take, nothing
#: written. It reads fields only (no reference counts, no call into the interpreter).
#: It is called with the GIL held (``ctypes.PyDLL``): a step of the law is a
#: microsecond or two, less than handing the GIL over and taking it back would cost.
_SHIM = r"""
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>
#include <numpy/ndarraytypes.h>
#include <stdint.h>
#define F(o) ((const PyArrayObject_fields *)(o))
#define C_ORDER NPY_ARRAY_C_CONTIGUOUS
#define WRITABLE NPY_ARRAY_WRITEABLE
extern int32_t servo_sim_law_step_inner(void *, void *, npy_intp, char *, char *, char *,
    char *, char *, char *, char *, char *, char *, char *, char *);
extern int32_t servo_sim_law_keep_inner(void *, void *, npy_intp, char *, char *, char *,
    char *);
static const PyTypeObject *tuple, *ndarray;
static const PyArray_Descr *f64, *b1;

/* the types and descriptors compared against (from the caller: no symbol of the
   interpreter's or numpy's is linked) */
void servo_sim_law_init(const void *tuple_type, const void *ndarray_type,
                        const void *float64_descr, const void *bool_descr) {
    tuple = (const PyTypeObject *)tuple_type;
    ndarray = (const PyTypeObject *)ndarray_type;
    f64 = (const PyArray_Descr *)float64_descr;
    b1 = (const PyArray_Descr *)bool_descr;
}

/* o is an ndarray of descr, rows x n (rows < 0: n long), with the flags */
static int ok(PyObject *o, const PyArray_Descr *descr, npy_intp rows, npy_intp n,
              int flags) {
    const PyArrayObject_fields *a = F(o);
    if (Py_TYPE(o) != ndarray || a->descr != descr || (a->flags & flags) != flags)
        return 0;
    if (rows < 0) return a->nd == 1 && a->dimensions[0] == n;
    return a->nd == 2 && a->dimensions[0] == rows && a->dimensions[1] == n;
}

/* the arguments' tuple of count items into a; the motors: the first's length (an
   ndarray of one dimension), else -1 */
static npy_intp unpack(PyObject *arguments, int count, PyObject **a) {
    if (Py_TYPE(arguments) != tuple || PyTuple_GET_SIZE(arguments) != count) return -1;
    for (int k = 0; k < count; k++) a[k] = PyTuple_GET_ITEM(arguments, k);
    return Py_TYPE(a[0]) == ndarray && F(a[0])->nd == 1 ? F(a[0])->dimensions[0] : -1;
}

/* arguments: (x, v, p, mass, inertia_dt, parameters, commands, state, masks, flags) */
int servo_sim_law_step(PyObject *arguments, PyObject *out) {
    void *ret[4] = {0, 0, 0, 0};
    void *exc = 0;
    PyObject *a[10];
    npy_intp n = unpack(arguments, 10, a);
    if (n < 0) return -1;
    if (!(ok(a[0], f64, -1, n, C_ORDER) && ok(a[1], f64, -1, n, C_ORDER)
          && ok(a[2], f64, -1, n, C_ORDER) && ok(a[3], f64, -1, n, C_ORDER)
          && ok(a[4], f64, -1, n, C_ORDER)
          && ok(a[5], f64, PARAMETER_ROWS, n, C_ORDER)
          && ok(a[6], f64, COMMAND_ROWS, n, C_ORDER)
          && ok(a[7], f64, STATE_ROWS, n, C_ORDER | WRITABLE)
          && ok(a[8], b1, MASK_ROWS, n, C_ORDER | WRITABLE)
          && ok(a[9], b1, -1, FLAG_COUNT, C_ORDER | WRITABLE)
          && ok(out, f64, RESULT_ROWS, n, C_ORDER | WRITABLE))) return -1;
    return servo_sim_law_step_inner(ret, &exc, n, F(a[0])->data, F(a[1])->data,
        F(a[2])->data, F(a[3])->data, F(a[4])->data, F(a[5])->data, F(a[6])->data,
        F(a[7])->data, F(a[8])->data, F(a[9])->data, F(out)->data) ? -2 : 0;
}

/* arguments: (force, active_gain, energy, energy_per_force) */
int servo_sim_law_keep(PyObject *arguments) {
    void *ret[4] = {0, 0, 0, 0};
    void *exc = 0;
    PyObject *a[4];
    npy_intp n = unpack(arguments, 4, a);
    if (n < 0) return -1;
    if (!(ok(a[0], f64, -1, n, C_ORDER | WRITABLE) && ok(a[1], f64, -1, n, C_ORDER)
          && ok(a[2], f64, -1, n, C_ORDER | WRITABLE) && ok(a[3], f64, -1, n, C_ORDER)))
        return -1;
    return servo_sim_law_keep_inner(ret, &exc, n, F(a[0])->data, F(a[1])->data,
        F(a[2])->data, F(a[3])->data) ? -2 : 0;
}
"""


def _step_pointers(n, x_, v_, p_, mass_, inertia_dt_, parameters_, commands_, state_,
                   masks_, flags_, out_):
    """:func:`law._each_motor` over raw pointers (``n`` motors), the results into
    ``out_``: what numba compiles to the library's step (in :func:`_compile_objects`'
    namespace, where ``servo_step`` is the law compiled for one motor's numbers)."""
    x = carray(x_, (n,), np.float64)
    v = carray(v_, (n,), np.float64)
    p = carray(p_, (n,), np.float64)
    mass = carray(mass_, (n,), np.float64)
    inertia_dt = carray(inertia_dt_, (n,), np.float64)
    parameters = carray(parameters_, (PARAMETER_ROWS, n), np.float64)
    commands = carray(commands_, (COMMAND_ROWS, n), np.float64)
    state = carray(state_, (STATE_ROWS, n), np.float64)
    masks = carray(masks_, (MASK_ROWS, n), np.bool_)
    flags = carray(flags_, (FLAG_COUNT,), np.bool_)
    out = carray(out_, (RESULT_ROWS, n), np.float64)
    servo_step(x, v, p, mass, inertia_dt, parameters, commands, state, masks, flags, out,
               range(n))
    flags[ANY_STARTING] = False  # the step started their profiles


def _keep_pointers(n, force_, active_gain_, energy_, energy_per_force_):
    """:func:`law.keep_motor_force` over raw pointers (``n`` motors), motor by motor: its
    array expression would allocate a temporary (numba's runtime, which the library has
    not); the same operations in the same order, so the same bits."""
    force = carray(force_, (n,), np.float64)
    active_gain = carray(active_gain_, (n,), np.float64)
    energy = carray(energy_, (n,), np.float64)
    energy_per_force = carray(energy_per_force_, (n,), np.float64)
    for i in range(n):
        force[i] *= active_gain[i]
        energy[i] += np.abs(force[i]) * energy_per_force[i]


# ---------------------------------------------------------------- where, and for what

def sources() -> bytes:
    """What the library is compiled from: the law's, its tables' and this module's
    sources (the C shim is here)."""
    return b"".join(Path(module.__file__).read_bytes() for module in (law, tables,
                                                                       sys.modules[__name__]))


def _version(name: str) -> str:
    """The installed distribution of package ``name`` (its ``dist-info`` directory's
    name: ``numba-0.61.2.dist-info``; importlib.metadata's import costs more than the
    whole load), or "-" where it is not installed."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return "-"
    where = Path(next(iter(spec.submodule_search_locations))).parent
    found = sorted(path.name for path in where.glob(f"{name}-*.dist-info"))
    if found:
        return " ".join(found)
    stat = (where / name / "__init__.py").stat()  # (a source tree: its file's stamp)
    return f"{stat.st_size} {stat.st_mtime_ns}"


def _cpu() -> str:
    """The CPU the code is compiled for: its model and feature flags where Linux says
    them, else what ``platform`` knows."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return platform.processor()
    wanted = ("model name", "flags", "Features", "CPU part")
    lines = {line.split(":")[0].strip(): line for line in text.splitlines()
             if line.split(":")[0].strip() in wanted}
    return "\n".join(sorted(lines.values()))


def key(law_sources: bytes) -> str:
    """The library's key: a hash of ``law_sources`` (:func:`sources`), numba's,
    llvmlite's and numpy's versions, the interpreter and the CPU."""
    digest = hashlib.sha256(law_sources)
    for part in (_version("numba"), _version("llvmlite"), np.__version__,
                 sys.implementation.cache_tag, str(object.__basicsize__),
                 str(tuple.__basicsize__),
                 platform.machine(), _cpu()):
        digest.update(b"\0" + part.encode())
    return digest.hexdigest()[:24]


def cache_dir() -> Path:
    """Where libraries are kept: ``SERVO_SIM_LAW_CACHE``, else the package's
    ``__pycache__`` (beside numba's cache of the law) where it is writable, else the
    user's cache (``XDG_CACHE_HOME``, ``~/.cache``) under ``servo_sim``."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen:
        return Path(chosen)
    beside = Path(law.__file__).parent / "__pycache__"
    if os.access(beside if beside.exists() else beside.parent, os.W_OK):
        return beside
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "servo_sim"


def library_path(law_sources: bytes | None = None) -> Path:
    """The library for ``law_sources`` (default: this package's, :func:`sources`)."""
    return cache_dir() / f"servo_law-{key(sources() if law_sources is None else law_sources)}.so"


# ---------------------------------------------------------------- loading

class Runner:
    """The loaded library's two functions, as the bank calls numba's: :attr:`step` (as
    :func:`law.step_motors`) and :attr:`keep_motor_force` (as :func:`law.keep_motor_force`).
    Arrays the library cannot take as they are (another dtype, not C-ordered, a shape
    that does not match) go to numpy's functions instead: the same bits."""

    def __init__(self, path: Path) -> None:
        """Load the library at ``path`` (``OSError`` if it cannot be)."""
        #: where the library was loaded from
        self.path = path
        self._library = library = ctypes.PyDLL(str(path))
        library.servo_sim_law_init.argtypes = [ctypes.c_void_p] * 4
        library.servo_sim_law_init.restype = None
        library.servo_sim_law_init(id(tuple), id(np.ndarray), id(np.dtype(np.float64)),
                                   id(np.dtype(np.bool_)))
        native_step = library.servo_sim_law_step
        native_step.argtypes = [ctypes.py_object] * 2
        native_step.restype = ctypes.c_int
        native_keep = library.servo_sim_law_keep
        native_keep.argtypes = [ctypes.py_object]
        native_keep.restype = ctypes.c_int
        empty, rows = np.empty, tables.RESULT_ROWS
        numpy_step, numpy_keep = law.step_motors, law.keep_motor_force

        def step(*arguments: np.ndarray) -> np.ndarray:
            """:func:`law.step_motors` (the same arguments: ``x, v, p, mass, inertia_dt,
            parameters, commands, state, masks, flags``) in the library's machine code."""
            out = empty((rows, len(arguments[0])))
            if native_step(arguments, out):
                return numpy_step(*arguments)
            return out

        def keep_motor_force(*arguments: np.ndarray) -> None:
            """:func:`law.keep_motor_force` (``force, active_gain, energy,
            energy_per_force``) in the library's machine code."""
            if native_keep(arguments):
                numpy_keep(*arguments)

        #: the law's step (the same function object each time: a bank compares it)
        self.step: Callable[..., np.ndarray] = step
        #: what the bank keeps of a step's motor force
        self.keep_motor_force: Callable[..., None] = keep_motor_force


#: the runner of this process (runner), once loaded or built; False: it cannot be
_RUNNER: dict[str, Any] = {"runner": None, "failed": False}
_RUNNER_LOCK = threading.Lock()


def runner(build: bool = True) -> Runner | None:
    """The law's ahead-of-time runner: the library loaded from the cache (no numba
    import), else built first where ``build`` (numba compiles it once: seconds, logged),
    or None (no compiler, a symbol left, ``SERVO_SIM_AHEAD=0``...: one debug line, and
    ``law.compiled`` uses numba's JIT runner)."""
    if os.environ.get(AHEAD_ENV, "1") == "0":
        return None
    with _RUNNER_LOCK:
        if _RUNNER["runner"] is not None or _RUNNER["failed"]:
            return _RUNNER["runner"]
        path = library_path()
        try:
            if not path.exists():
                if not build:
                    return None
                seconds = build_library(path)
                log.info("the servo law compiled ahead of time in %.1f s: %s", seconds, path)
            _RUNNER["runner"] = Runner(path)
        except (OSError, RuntimeError, ImportError, ValueError) as error:
            _RUNNER["failed"] = True
            log.debug("no ahead-of-time servo law (numba's JIT instead): %s", error)
        return _RUNNER["runner"]


def compiled() -> Callable[..., Any] | None:
    """The compiled runner a bank steps with: the library's step (:func:`runner`: loaded,
    else built once), else numba's JIT runner (``law.compiled``); None without numba."""
    if not law.can_compile():
        return None
    library = runner()
    return library.step if library is not None else law.compiled()


def compiled_keep_motor_force() -> Callable[..., Any] | None:
    """:func:`law.keep_motor_force` compiled alike (the library's with its step)."""
    step = compiled()
    if step is None:
        return None
    library = runner()
    if library is not None and step is library.step:
        return library.keep_motor_force
    return law.compiled_keep_motor_force()


# ---------------------------------------------------------------- building

def build_library(path: Path) -> float:
    """Compile the law with numba and link it into the library at ``path`` (written
    whole or not at all; in the package's own ``__pycache__`` the libraries of its
    former sources are removed); the seconds it took. ``RuntimeError`` where it cannot be
    (no C compiler or ``nm``, a symbol left that the C library does not define)."""
    import shutil  # (the build's alone)
    import subprocess
    import sysconfig
    import tempfile

    started = time.perf_counter()
    named = os.environ.get("CC")  # the compiler named, else the system's
    compiler = shutil.which(named) if named else shutil.which("cc") or shutil.which("gcc")
    if compiler is None or shutil.which("nm") is None:
        raise RuntimeError("no C compiler (cc) or nm to link the law with")
    objects = _compile_objects()
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".servo_law-") as work:
        files = []
        for name, data in objects.items():
            files.append(Path(work) / f"{name}.o")
            files[-1].write_bytes(data)
        _check_symbols(files)
        shim = Path(work) / "shim.c"
        shim.write_text(_SHIM)
        includes = {sysconfig.get_paths()[name] for name in ("include", "platinclude")}
        defines = [*(f"-I{where}" for where in sorted(includes)), f"-I{np.get_include()}"] + [
            f"-D{name}={getattr(tables, name)}" for name in (
                "PARAMETER_ROWS", "COMMAND_ROWS", "STATE_ROWS", "MASK_ROWS", "FLAG_COUNT",
                "RESULT_ROWS")]
        built = Path(work) / "law.so"
        linked = subprocess.run([compiler, "-O2", "-DNDEBUG", "-fPIC", "-shared", *defines,
                                 "-o", str(built), str(shim), *map(str, files), "-lm"],
                                capture_output=True, text=True, timeout=120)
        if linked.returncode != 0:
            raise RuntimeError(f"{compiler} could not link the law: {linked.stderr[-500:]}")
        os.replace(built, path)
    if path.parent == Path(law.__file__).parent / "__pycache__":
        # this package's own cache: its other libraries are of its former sources
        for old in path.parent.glob("servo_law-*.so"):
            if old != path:
                old.unlink(missing_ok=True)
    return time.perf_counter() - started


def _check_symbols(files: list[Path]) -> None:
    """Every symbol the law's objects leave undefined is the C library's (libm, libc):
    none of numba's helpers or Python's."""
    import ctypes.util  # (here: its import costs more than loading the library)
    import subprocess

    listed = subprocess.run(["nm", "-u", *map(str, files)], capture_output=True, text=True,
                            timeout=60)
    if listed.returncode != 0:
        raise RuntimeError(f"nm could not read the law's objects: {listed.stderr[-500:]}")
    found = listed.stdout
    names = {line.split()[-1] for line in found.splitlines()
             if line.strip() and not line.endswith(":")}
    libraries = [ctypes.CDLL(ctypes.util.find_library(name) or f"lib{name}.so.6")
                 for name in ("m", "c")]
    left = sorted(name for name in names
                  if not any(hasattr(library, name) for library in libraries))
    if left:
        raise RuntimeError(f"the compiled law needs symbols the C library lacks: {left}")


def _compile_objects() -> dict[str, bytes]:
    """numba's machine code for :func:`_step_pointers` and :func:`_keep_pointers` as
    object files (position independent, for this CPU), each reduced to its one
    function, renamed ``servo_sim_law_<name>_inner``."""
    import llvmlite.binding as llvm
    import numba
    from numba import types

    jit = law.numba_jit()
    if jit is None:
        raise RuntimeError("numba is not installed (or SERVO_SIM_JIT=0)")
    namespace = law.one_motor_namespace(jit)
    namespace = dict(globals(), carray=numba.carray, servo_step=namespace["servo_step"])
    pointer = types.voidptr
    objects = {}
    for name, function, count in (("step", _step_pointers, 11),
                                  ("keep", _keep_pointers, 4)):
        signature = types.void(types.intp, *([pointer] * count))
        compiled = numba.cfunc(signature, nopython=True, error_model="numpy")(
            law.clone(function, namespace))
        library = compiled._library
        inner = compiled.native_name.removeprefix("cfunc.")
        module = llvm.parse_assembly(str(library._final_module))
        for each in module.functions:
            if not each.is_declaration:
                each.linkage = "external" if each.name == inner else "internal"
        for each in module.global_variables:
            if not each.is_declaration:
                each.linkage = "internal"
        module.get_function(inner).name = f"servo_sim_law_{name}_inner"
        codegen = library.codegen
        machine = llvm.Target.from_default_triple().create_target_machine(
            cpu=codegen._get_host_cpu_name(), features=codegen._tm_features, opt=3,
            reloc="pic", codemodel="default")
        passes = llvm.create_new_module_pass_manager()
        passes.add_global_dead_code_eliminate_pass()
        passes.add_strip_dead_prototype_pass()
        passes.run(module, llvm.create_pass_builder(
            machine, llvm.create_pipeline_tuning_options()))
        objects[name] = machine.emit_object(module)
    return objects
