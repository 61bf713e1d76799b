"""The package's PEP 517 build backend: setuptools' own (setuptools.build_meta),
except that a wheel is packed here when the `wheel` package is missing.

Why: setuptools before 70.1 builds wheels only through the separate `wheel`
package, which a fresh virtual environment does not have (Debian 12's venv
holds pip 23 and setuptools 66). `pip install --no-build-isolation ./python`
there, the README's offline line, then failed with "invalid command
'bdist_wheel'". The wheel packed here holds what `setup.py build` made
(ktune/, libktune.so, the ktune and ktune-tuner programs, the C extension)
and the metadata setuptools writes (dist-info), as the wheel format (PEP 427)
asks: a WHEEL file with this interpreter's tag and a RECORD of hashes."""

import base64
import hashlib
import os
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

from setuptools import build_meta as _setuptools

get_requires_for_build_sdist = _setuptools.get_requires_for_build_sdist
build_sdist = _setuptools.build_sdist


def _have_wheel():
    try:
        import wheel  # noqa: F401
    except ImportError:
        return False
    return True


def get_requires_for_build_wheel(config_settings=None):
    # Under build isolation pip installs these; setuptools asks for `wheel`,
    # which build_wheel below does without.
    return [r for r in _setuptools.get_requires_for_build_wheel(config_settings) if r != "wheel"]


def _requires_dist(requires_txt):
    """setuptools' requires.txt ("[extra]" sections) as Requires-Dist lines."""
    lines, extra = [], None
    for line in requires_txt.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            extra = line[1:-1]
        elif line:
            lines.append(f"Requires-Dist: {line}" + (f'; extra == "{extra}"' if extra else ""))
    return lines


def _dist_info_from_egg_info(egg_info, dist_info):
    """The dist-info folder (PEP 376) from setuptools' egg-info: METADATA is
    PKG-INFO with the requirements in it, entry_points.txt (the ktune
    command) and top_level.txt as they are."""
    os.makedirs(dist_info)
    with open(os.path.join(egg_info, "PKG-INFO"), encoding="utf-8") as f:
        head, sep, body = f.read().partition("\n\n")
    requires = os.path.join(egg_info, "requires.txt")
    if os.path.exists(requires):
        with open(requires, encoding="utf-8") as f:
            head = "\n".join([head] + _requires_dist(f.read()))
    with open(os.path.join(dist_info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(head + sep + body)
    for name in ("entry_points.txt", "top_level.txt"):
        if os.path.exists(os.path.join(egg_info, name)):
            with open(os.path.join(egg_info, name), "rb") as src, open(os.path.join(dist_info, name), "wb") as dst:
                dst.write(src.read())


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    if _have_wheel():
        return _setuptools.prepare_metadata_for_build_wheel(metadata_directory, config_settings)
    with tempfile.TemporaryDirectory(prefix="ktune-egg-info-") as tmp:
        subprocess.run([sys.executable, "setup.py", "-q", "egg_info", "--egg-base", tmp], check=True,
                       stdout=sys.stderr)
        (egg_info,) = [os.path.join(tmp, d) for d in os.listdir(tmp) if d.endswith(".egg-info")]
        name = os.path.basename(egg_info)[: -len(".egg-info")]
        with open(os.path.join(egg_info, "PKG-INFO"), encoding="utf-8") as f:
            version = next(line.split(":", 1)[1].strip() for line in f if line.startswith("Version:"))
        info_name = f"{name}-{version}.dist-info"
        _dist_info_from_egg_info(egg_info, os.path.join(metadata_directory, info_name))
    return info_name


def _tag():
    """This interpreter's wheel tag: cp311-cp311-linux_x86_64."""
    py = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{py}-{py}-{platform}"


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _pack(wheel_path, lib_dir, dist_info):
    """Zips LIB_DIR's files and the DIST_INFO folder into WHEEL_PATH, with RECORD last."""
    info_name = os.path.basename(dist_info)
    records = []
    with zipfile.ZipFile(wheel_path, "w", zipfile.ZIP_DEFLATED) as z:
        for top, prefix in ((lib_dir, ""), (dist_info, info_name + "/")):
            for folder, _dirs, files in sorted(os.walk(top)):
                for name in sorted(files):
                    path = os.path.join(folder, name)
                    arcname = prefix + os.path.relpath(path, top).replace(os.sep, "/")
                    if arcname == f"{info_name}/RECORD":
                        continue
                    with open(path, "rb") as f:
                        data = f.read()
                    entry = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
                    entry.external_attr = (os.stat(path).st_mode & 0o777 | 0o100000) << 16  # keeps ktune's x bit
                    entry.compress_type = zipfile.ZIP_DEFLATED
                    z.writestr(entry, data)
                    records.append(_record_line(arcname, data))
        records.append(f"{info_name}/RECORD,,")
        z.writestr(f"{info_name}/RECORD", "\n".join(records) + "\n")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if _have_wheel():
        return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
    with tempfile.TemporaryDirectory(prefix="ktune-wheel-") as tmp:
        lib_dir, meta_dir = os.path.join(tmp, "lib"), os.path.join(tmp, "meta")
        os.makedirs(meta_dir)
        subprocess.run([sys.executable, "setup.py", "build", "--build-lib", lib_dir, "--build-temp",
                        os.path.join(tmp, "temp")], check=True, stdout=sys.stderr)
        info_name = metadata_directory and os.path.basename(metadata_directory)
        if not info_name:
            info_name = prepare_metadata_for_build_wheel(meta_dir, config_settings)
            metadata_directory = os.path.join(meta_dir, info_name)
        with open(os.path.join(metadata_directory, "WHEEL"), "w", encoding="utf-8") as f:
            f.write(f"Wheel-Version: 1.0\nGenerator: ktune build_backend.py\nRoot-Is-Purelib: false\nTag: {_tag()}\n")
        name, version = info_name[: -len(".dist-info")].split("-", 1)
        wheel_name = f"{name}-{version}-{_tag()}.whl"
        _pack(os.path.join(wheel_directory, wheel_name), lib_dir, metadata_directory)
    return wheel_name
