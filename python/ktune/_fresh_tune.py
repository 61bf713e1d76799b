"""python -m ktune._fresh_tune: ktune.tune in a process that has loaded
nothing, for a caller whose process has the CUDA driver loaded (see
_tune._needs_fresh_process). Reads tune's arguments as JSON on stdin and
writes one JSON line on stdout: {"rc": 0 or a kt_err code, "message": ...,
"result": ktune's --json document or null}."""

import json
import sys

from . import errors
from ._tune import _tune_here


def main() -> int:
    args = json.loads(sys.stdin.read())
    reply = {"rc": 0, "message": "", "result": None}
    try:
        reply["result"] = _tune_here(**args).raw
    except errors.KtuneError as e:
        reply.update(rc=e.code or -9, message=str(e), result=e.result.raw if e.result is not None else None)
    except KeyboardInterrupt:
        reply.update(rc=errors.Interrupted.code, message="ktune: interrupted")
    sys.stdout.write(json.dumps(reply) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
