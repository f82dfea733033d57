"""pipesim: a discrete-event simulator of pipeline-parallel training schedules, from Python.

Each function calls the same C++ library functions as the ``pipesim`` command and turns the text that
command writes (its ``--json`` document, its sweep CSV, its PyTorch CSV) into Python objects, so results are
the command's by construction:

    >>> import pipesim
    >>> results = pipesim.run("scenarios/default.yaml", schedules="1f1b-flush,paci")
    >>> results[0]["throughput_samples_per_s"]

A scenario is a path (str or pathlib.Path) to a YAML file, or a dict with the YAML file's structure (README.md,
"Scenario format"). Failures raise pipesim.Error (pipesim.InputError for bad input) whose message is the one
the command prints after "pipesim: error: ".
"""

import csv
import io
import json
import os
import re
import tempfile
import warnings
from collections.abc import Mapping

from . import _pipesim
from ._pipesim import Error, InputError

__version__ = _pipesim.__version__
__all__ = ["run", "sweep", "schedules", "export", "set_max_memory_gb", "max_memory_gb", "Error",
           "InputError", "__version__"]

# How a dict scenario is named in error messages (the YAML reader's "file:line: key ..." form).
DICT_SOURCE = "<dict>"


def _scenario_text(scenario):
    """A dict scenario as YAML text: JSON (which YAML reads), one key a line so messages' lines point at it."""
    try:
        return json.dumps(scenario, indent=1, ensure_ascii=False)
    except (TypeError, ValueError) as e:
        raise InputError(f"{DICT_SOURCE}: cannot be written as YAML: {e}") from None


def _scenario_input(scenario):
    """(path, text, source) for the facade: a path, a dict's text, or the default scenario (None)."""
    if scenario is None:
        return "", "", ""
    if isinstance(scenario, Mapping):
        return "", _scenario_text(scenario), DICT_SOURCE
    if isinstance(scenario, (str, os.PathLike)):
        return os.fspath(scenario), "", ""
    raise TypeError(f"scenario: expected a dict, a path (str or os.PathLike) or None, got "
                    f"{type(scenario).__name__}")


def _override_value(value):
    """A --set value as YAML text: strings as written, everything else as JSON (which YAML reads)."""
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _overrides(set_, batches):
    """--set assignments from a dict {key: value}, a "key=value" string or a list of them; batches adds
    pipeline.batches."""
    if set_ is None:
        assignments = []
    elif isinstance(set_, str):
        assignments = [set_]
    elif isinstance(set_, Mapping):
        assignments = [f"{key}={_override_value(value)}" for key, value in set_.items()]
    else:
        assignments = [str(item) for item in set_]
    if batches is not None:
        assignments.append(f"pipeline.batches={_override_value(batches)}")
    return assignments


def _integer(name, value):
    """An integer argument, or pipesim.InputError naming it (int() alone raises a bare ValueError)."""
    try:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name}: expected an integer, got {value!r}") from None


def _number(name, value):
    """A number argument, or pipesim.InputError naming it."""
    try:
        if isinstance(value, bool):
            raise ValueError
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name}: expected a number, got {value!r}") from None


def _write_text(path, text):
    """The text to a file, as the command writes its outputs: a path that cannot be written is an InputError
    naming it (not a bare IsADirectoryError or PermissionError)."""
    try:
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
    except IsADirectoryError:
        raise InputError(f"{os.fspath(path)}: is a directory, not an output file") from None
    except OSError as e:
        raise InputError(f"{os.fspath(path)}: cannot write it: {e.strerror}") from None


def _list_text(value):
    """A list option in the command's syntax: a string as written ("4:64:x2"), a list joined with commas."""
    if value is None:
        return ""
    if isinstance(value, (str, int, float)):
        return str(value)
    return ",".join(str(item) for item in value)


def run(scenario=None, schedules=None, set=None, batches=None, memory_timeline=False, document=False,
        allow_unmodelled=False):
    """Simulate a scenario's schedules, as ``pipesim run SCENARIO --json FILE``.

    scenario: a path (str or pathlib.Path) to a scenario YAML file, a dict with the same structure, or None
        for the default scenario.
    schedules: the schedules to run instead of the scenario's: "1f1b-flush,paci:accumulation=4" (the
        command's --schedules syntax, csv:PATH for a PyTorch CSV) or a list of such items.
    set: scenario keys to override, as --set does: {"pipeline.microbatches": 16} or ["costs.comm_ms=0.5"].
    batches: shorthand for set={"pipeline.batches": batches} (a minimum: runs extend to a steady state).
    memory_timeline: include each device's memory timeline, as --memory-timeline.
    document: return the whole JSON document (format, scenario, results) instead of its results.
    allow_unmodelled: run a model with a feature pipesim does not model yet (model.moe, model.mla, ...) as its
        dense stand-in, as --allow-unmodelled; each result then lists the features under "unmodelled".
        Without it such a scenario raises pipesim.InputError naming the key.

    Returns one dict per schedule that ran, exactly the entries of the command's JSON "results" list
    (README.md, "JSON output"). Schedules that cannot run here (the schedule rejects the pipeline, a run over
    the resource ceiling, ...) are skipped as the command skips them: listed in the document's "skipped" list
    ({schedule, where, reason}) and, when document is False, reported with warnings.warn. Raises
    pipesim.InputError for bad input (and when nothing could run), pipesim.Error for other failures, with
    the command's message.
    """
    path, text, source = _scenario_input(scenario)
    out = _pipesim.run_json(path, text, source, _list_text(schedules), _overrides(set, batches),
                            bool(memory_timeline), bool(allow_unmodelled))
    parsed = json.loads(out)
    if document:
        return parsed
    for skipped in parsed.get("skipped", []):
        warnings.warn(f"pipesim: skipped {skipped['schedule']}: {skipped['reason']}", stacklevel=2)
    return parsed["results"]


_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")


def _cell(text):
    """A sweep CSV cell as a Python value: "" -> None, true/false -> bool, numbers -> int/float, else str."""
    if text == "":
        return None
    if text in ("true", "false"):
        return text == "true"
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def sweep(scenario, stages=None, microbatches=None, schedules=None, param=None, set=None, batches=None,
          jobs=None, allow_unmodelled=False):
    """Run the product of lists of N, m, schedules and schedule parameters, as ``pipesim sweep``.

    scenario: a path to a scenario YAML file or a dict with the same structure (written to a temporary file,
        which error messages then name).
    stages, microbatches: lists of N and m, as a list of ints or the command's syntax ("4,8,16", "4:64:x2",
        "2:10:+2"); None: the scenario's.
    schedules: as in run(); None: the scenario's.
    param: schedule parameters and their lists, applied to every schedule: {"memory_limit": [1, 1.5, 2]} or
        {"memory_limit": "1:2:+0.25"}.
    set, batches: scenario overrides for every run, as in run().
    jobs: threads (None: every core).
    allow_unmodelled: as in run().

    Returns one dict per run, in the order of the product, keyed by the command's CSV columns
    (schedule_name, one per param, the run columns, error) with numbers as int/float, true/false as bool and
    empty cells as None. A run that fails keeps its row with its message under "error" (the command writes
    the CSV too, then exits non-zero). Raises pipesim.Error (InputError) when the sweep cannot start.
    """
    params = [(key, _list_text(values)) for key, values in (param or {}).items()]
    arguments = (_list_text(stages), _list_text(microbatches), _list_text(schedules), params,
                 _overrides(set, batches), 0 if jobs is None else _integer("jobs", jobs), bool(allow_unmodelled))
    if isinstance(scenario, Mapping):
        # The command's sweep reads a file: the dict goes through one.
        with tempfile.TemporaryDirectory(prefix="pipesim-") as directory:
            path = os.path.join(directory, "scenario.yaml")
            with open(path, "w", encoding="utf-8") as file:
                file.write(_scenario_text(scenario))
            out = _pipesim.sweep_csv(path, *arguments)
    else:
        path, _, _ = _scenario_input(scenario)
        if not path:
            raise TypeError("sweep: scenario: expected a dict or a path")
        out = _pipesim.sweep_csv(path, *arguments)
    return [{key: _cell(value) for key, value in row.items()} for row in csv.DictReader(io.StringIO(out))]


def schedules():
    """The schedules pipesim can simulate, as ``pipesim schedules`` lists them.

    Returns one dict per registered schedule: name, description (the command's one line), default_sync (the
    optimizer synchronisation the schedule assumes when the scenario sets none, as the JSON's "sync" names
    it), splits_backward (runs I and W instead of B), exportable (static, so export() can write it).
    """
    return json.loads(_pipesim.schedules_json())


def export(schedule, stages=4, microbatches=8, chunks=None, costs="1,1,1", comm_ms=0, path=None):
    """A static schedule's per-device lists for one batch in PyTorch's pipelining CSV format, as
    ``pipesim export SCHEDULE --stages N --microbatches M [--chunks v] [--costs F,I,W] [--comm ms]``.

    schedule: a name, "name:key=value" or "csv:PATH".
    costs: per-microbatch times in ms, F,B or F,I,W: "1,2" or (1, 1, 1).
    comm_ms: the latency of every cross-device transfer in ms.
    path: also write the CSV to this file.

    Returns the CSV text; a run-time schedule (PipeDream, PACI, ...) raises pipesim.InputError.
    """
    text = _pipesim.export_csv(schedule, _integer("stages", stages), _integer("microbatches", microbatches),
                               0 if chunks is None else _integer("chunks", chunks), _list_text(costs),
                               str(comm_ms))
    if path is not None:
        _write_text(path, text)
    return text


def set_max_memory_gb(gb):
    """Refuse runs whose estimated memory exceeds gb GB, as the command's --max-memory-gb (default 4).
    It holds for every later call of this module, in every thread (each call reads it as it starts)."""
    _pipesim.set_max_memory_gb(_number("gb", gb))


def max_memory_gb():
    """The ceiling set_max_memory_gb() set, in GB."""
    return _pipesim.max_memory_gb()
