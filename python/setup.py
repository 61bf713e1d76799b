"""Builds libktune into the package, so that `pip install ./python` needs no
compiler flags: CMake is run on the repository one folder up and only the
shared library is built (a minute on two cores; an unchanged tree rebuilds
nothing). With $KTUNE_LIBRARY set, or outside the repository with a ktune
that pkg-config knows, nothing is built: the package records that library's
path and loads it (the GPU machine's scripts/h200_build.sh build, an installed
ktune). The C extension ktune._launch (the per-call path) is built beside
it when Python's headers are there, else left out with a warning: the
package then calls kernels through ctypes (ktune.launch_path says which)."""

import os
import shutil
import subprocess
import sys

from setuptools import Distribution, Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def _say(msg: str) -> None:
    print("ktune: " + msg, file=sys.stderr, flush=True)


def _installed_library():
    """The library to use instead of building one, or None."""
    env = os.environ.get("KTUNE_LIBRARY")
    if env:
        if not os.path.isabs(env):  # pip runs this in python/, not where the command was typed
            sys.exit(f"ktune: KTUNE_LIBRARY={env} is a relative path, which pip reads from {HERE}; "
                     f"give an absolute one (KTUNE_LIBRARY=$PWD/{env})")
        if not os.path.isfile(env):
            sys.exit(f"ktune: KTUNE_LIBRARY={env}: no such file (build it: cmake --build build, or unset it)")
        return os.path.abspath(env)
    if os.path.isfile(os.path.join(REPO, "CMakeLists.txt")):
        return None  # the repository is here: build the library that matches this package
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "ktune"], capture_output=True, text=True).stdout
    except OSError:
        libdir = ""
    path = os.path.join(libdir.strip(), "libktune.so.0")
    if libdir.strip() and os.path.isfile(path):
        return path
    sys.exit("ktune: no repository to build libktune from (../CMakeLists.txt) and no installed ktune "
             "(pkg-config ktune); set KTUNE_LIBRARY=/path/to/libktune.so")


def _installed_command(library):
    """The ktune command beside an installed LIBRARY (a build folder's, or
    PREFIX/bin/ktune of PREFIX/lib/libktune.so), or None."""
    if not library:
        return None
    folder = os.path.dirname(library)
    for cand in (os.path.join(folder, "ktune"), os.path.join(os.path.dirname(folder), "bin", "ktune")):
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def _build_library(build_temp: str) -> str:
    cmake = shutil.which("cmake")
    if not cmake:
        sys.exit("ktune: building libktune needs cmake (apt-get install cmake, or scripts/deps.sh), "
                 "or set KTUNE_LIBRARY=/path/to/libktune.so")
    build = os.path.join(build_temp, "libktune")
    args = [cmake, "-S", REPO, "-B", build, "-DCMAKE_BUILD_TYPE=Release"]
    deps = os.environ.get("KTUNE_DEPS_DIR")
    if deps:  # headers carried to a machine without development packages (scripts/h200_build.sh)
        args += [f"-DKTUNE_DEPS_DIR={deps}", f"-DCMAKE_C_FLAGS=-idirafter {deps}/include"]
    jobs = str(os.cpu_count() or 2)
    _say(f"building libktune with CMake in {build}")
    # ktune-tuner: the helper a miss tunes in, found beside the library (it is copied there).
    # ktune: the command line, which the package's `ktune` console script and `python -m ktune` run.
    for cmd in (args, [cmake, "--build", build, "--target", "ktune_shared", "ktune-tuner", "ktune", "-j", jobs]):
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            sys.exit(f"ktune: {' '.join(cmd)} failed:\n{r.stdout[-6000:]}")
    return os.path.join(build, "libktune.so")


class BuildPyWithLibrary(build_py):
    """build_py, plus libktune.so (or the recorded path of an installed one)."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "ktune")
        os.makedirs(target, exist_ok=True)
        installed = _installed_library()
        bundled = os.path.join(target, "libktune.so")
        if installed:
            _say(f"using {installed} (not building)")
            for left in (bundled, os.path.join(target, "ktune-tuner"), os.path.join(target, "ktune")):  # an earlier build's
                if os.path.exists(left):
                    os.remove(left)
        else:
            lib = _build_library(self.get_finalized_command("build").build_temp)
            shutil.copyfile(os.path.realpath(lib), bundled)
            helper = os.path.join(target, "ktune-tuner")  # beside the library, where kt_launch looks
            shutil.copyfile(os.path.join(os.path.dirname(lib), "ktune-tuner"), helper)
            os.chmod(helper, 0o755)
            cli = os.path.join(target, "ktune")  # beside ktune-tuner, which it finds beside itself
            shutil.copyfile(os.path.join(os.path.dirname(lib), "ktune"), cli)
            os.chmod(cli, 0o755)
        with open(os.path.join(target, "_built.py"), "w", encoding="utf-8") as f:
            f.write('"""Written by setup.py: the libktune this installation was built for, and its ktune."""\n')
            f.write(f"LIBRARY = {installed!r}\n")
            f.write(f"COMMAND = {_installed_command(installed)!r}\n")


def _ktune_include_dir():
    """Where ktune.h is: the repository's include/, else pkg-config's."""
    here = os.path.join(REPO, "include")
    if os.path.isfile(os.path.join(here, "ktune.h")):
        return here
    try:
        flags = subprocess.run(["pkg-config", "--cflags-only-I", "ktune"], capture_output=True, text=True).stdout
    except OSError:
        flags = ""
    for flag in flags.split():
        if os.path.isfile(os.path.join(flag[2:], "ktune.h")):
            return flag[2:]
    return None


def _extensions():
    """ktune._launch, the C per-call path (README, "Python"): optional, so
    that a machine without Python's headers (python3-dev) still installs
    the package, which then launches through ctypes (ktune.launch_path)."""
    include = _ktune_include_dir()
    if include is None:
        _say("ktune.h not found (no ../include, no pkg-config ktune): not building ktune._launch; "
             "calls go through ctypes")
        return []
    sources = [os.path.join("ktune", f) for f in ("_launch.c", "_launch_arrays.c", "_launch_shapes.c")]
    flags = ["-O2", "-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    if os.environ.get("KTUNE_WERROR") == "1":  # scripts/python-tests.sh: a warning fails the tests there
        flags.append("-Werror")
    return [Extension("ktune._launch", sources, include_dirs=[include], libraries=["dl"], optional=True,
                      extra_compile_args=flags)]


class BuildExtSaying(build_ext):
    """build_ext that says loudly when the optional extension did not build,
    and leaves no earlier build of it to be installed instead."""

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception:
            stale = self.get_ext_fullpath(ext.name)  # an earlier build's, from other sources
            if os.path.exists(stale):
                os.remove(stale)
            raise

    def run(self):
        super().run()
        for ext in self.extensions:
            if not os.path.exists(self.get_ext_fullpath(ext.name)):
                _say(f"WARNING: {ext.name} did not build (see the compiler's message above; Python's headers: "
                     "apt-get install python3-dev): ktune calls kernels through ctypes, slower per call")


class BinaryDistribution(Distribution):
    """The wheel carries a shared library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPyWithLibrary, "build_ext": BuildExtSaying}, distclass=BinaryDistribution,
      ext_modules=_extensions())
