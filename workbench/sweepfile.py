"""The sweep file of `gpumodel sweep` (workbench/sweep.py): read, checked and expanded into points and
runs. Its format is in sweep.py's HELP and README.md, Workbench."""

import decimal
import os
import re

import wbcommon as wb

SECTIONS = ("sweep", "axes", "fixed")
SWEEP_KEYS = ("scenario", "mode", "seeds")
MODES = ("cartesian", "zip", "one_at_a_time")
MAX_VALUES = 100000  # values one range may give, and runs one sweep may have
PARAM_KEY = re.compile(r"^[a-z][a-z0-9_]*\.[a-z0-9_]+$")
RANGE = re.compile(r"^(?P<start>[^\s.][^\s]*?)\s*\.\.\s*(?P<stop>\S+?)(?:\s+step\s+(?P<step>\S+))?$")
INLINE_COMMENT = re.compile(r"\s[#;].*$")


def bad(where, message):
    raise wb.BadInput(f"{where}: {message}")


class Entry:
    def __init__(self, key, value, line):
        self.key, self.value, self.line = key, value, line


def read_ini(path):
    """{section: [Entry]} in file order. A comment starts with # or ; at the start of a line or after
    whitespace; a key twice in a section and a section twice are refused."""
    raw = wb.read_bounded(path, "sweep file")
    if b"\0" in raw:
        raise wb.BadInput(f"sweep file '{path}': has a NUL byte; a sweep file is UTF-8 text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise wb.BadInput(f"sweep file '{path}': not UTF-8 (byte {e.start})")
    sections, current = {}, None
    for n, line in enumerate(text.splitlines(), 1):
        where = f"{path}:{n}"
        s = INLINE_COMMENT.sub("", line).strip()
        if not s or s[0] in "#;":
            continue
        if s.startswith("["):
            if not s.endswith("]"):
                bad(where, f"'{wb.echo(s)}': a section header is [name]")
            name = s[1:-1].strip()
            if name not in SECTIONS:
                bad(where, f"[{wb.echo(name)}]: unknown section; allowed: [sweep], [axes], [fixed]"
                    + wb.did_you_mean([f"[{n}]" for n in wb.suggest(name, SECTIONS)]))
            if name in sections:
                bad(where, f"[{name}]: section given twice")
            current = sections[name] = []
            continue
        if "=" not in s:
            bad(where, f"'{wb.echo(s)}': expected 'key = value'")
        key, value = (x.strip() for x in s.split("=", 1))
        if current is None:
            bad(where, f"{wb.echo(key)}: outside a section; put it under [sweep], [axes] or [fixed]")
        section = next(k for k, v in sections.items() if v is current)
        if not key:
            bad(where, f"'{wb.echo(s)}': a key is missing before '='")
        if any(e.key == key for e in current):
            bad(where, f"{section}.{wb.echo(key)}: given twice")
        current.append(Entry(key, value, n))
    return sections


def number(text, where, what):
    try:
        d = decimal.Decimal(text)
    except decimal.InvalidOperation:
        bad(where, f"bad range: {what} '{text}' is not a number")
    if not d.is_finite():
        bad(where, f"bad range: {what} '{text}' is not a finite number")
    return d


def decimal_text(d):
    s = format(d, "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def expand_range(m, where):
    start = number(m.group("start"), where, "start")
    stop = number(m.group("stop"), where, "stop")
    step = number(m.group("step"), where, "step") if m.group("step") is not None else decimal.Decimal(1)
    if step <= 0:
        bad(where, f"bad range: step {m.group('step')} must be greater than 0")
    if stop < start:
        bad(where, f"bad range: stop {m.group('stop')} is below start {m.group('start')}")
    count = int((stop - start) // step) + 1
    if count > MAX_VALUES:
        bad(where, f"bad range: {count} values; at most {MAX_VALUES}")
    return [decimal_text(start + i * step) for i in range(count)]


def parse_values(text, where):
    """'v1, v2, v3' or 'start..stop [step s]' -> a list of value strings, none empty, none twice."""
    if not text:
        bad(where, "empty; give values 'v1, v2, v3' or a range 'start..stop step s'")
    if "," not in text and ".." in text:
        m = RANGE.match(text)
        if not m:
            bad(where, f"bad range '{text}'; a range is 'start..stop' or 'start..stop step s'")
        values = expand_range(m, where)
    else:
        values = [v.strip() for v in text.split(",")]
        if any(not v for v in values):
            bad(where, f"'{text}' has an empty value; give values 'v1, v2, v3'")
        for v in values:
            if ".." in v:
                bad(where, f"'{v}': a range cannot be an item of a list; give a list or one range")
    seen = set()
    for v in values:
        if v in seen:
            bad(where, f"value '{v}' given twice")
        seen.add(v)
    return values


class Sweep:
    """A parsed, expanded sweep file."""

    def __init__(self, path):
        self.path = path
        self.stem = os.path.splitext(os.path.basename(path))[0]
        ini = read_ini(path)
        if "sweep" not in ini:
            bad(path, "[sweep]: missing; it names the scenario (scenario = FILE.ini)")
        settings = {}
        for e in ini["sweep"]:
            if e.key not in SWEEP_KEYS:
                bad(f"{path}:{e.line}", f"sweep.{e.key}: unknown key; allowed: {', '.join(SWEEP_KEYS)}"
                    + wb.did_you_mean(wb.suggest(e.key, SWEEP_KEYS)))
            settings[e.key] = e
        if "scenario" not in settings or not settings["scenario"].value:
            bad(path, "sweep.scenario: missing; the scenario file to run (relative to the sweep file)")
        e = settings["scenario"]
        self.scenario_given = e.value
        self.scenario = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), e.value))
        # A bare name (no '/', no .ini, no such file beside the sweep file) is the source tree's
        # scenarios/NAME.ini, as `gpumodel NAME` runs it.
        named = os.path.join(wb.REPO_ROOT, "scenarios", e.value + ".ini")
        if ("/" not in e.value and not e.value.endswith(".ini") and not os.path.isfile(self.scenario)
                and os.path.isfile(named)):
            self.scenario = named
        try:
            with open(self.scenario, "rb"):
                pass
        except OSError as err:
            names = sorted(os.path.splitext(f)[0] for f in os.listdir(os.path.join(wb.REPO_ROOT, "scenarios"))
                           if f.endswith(".ini"))
            stem = os.path.splitext(os.path.basename(e.value))[0]
            bad(f"{path}:{e.line}", f"sweep.scenario: cannot read '{self.scenario}': {err.strerror} "
                "(a relative path is taken from the sweep file's directory; a bare NAME is scenarios/NAME.ini)"
                + wb.did_you_mean(wb.suggest(stem, names)))
        self.mode = "cartesian"
        if "mode" in settings:
            e = settings["mode"]
            if e.value not in MODES:
                bad(f"{path}:{e.line}", f"sweep.mode: '{e.value}' is not allowed; one of {', '.join(MODES)}"
                    + wb.did_you_mean(wb.suggest(e.value, MODES)))
            self.mode = e.value
        self.seeds = ["1"]
        if "seeds" in settings:
            e = settings["seeds"]
            where = f"{path}:{e.line}: sweep.seeds"
            self.seeds = parse_values(e.value, where)
            for s in self.seeds:
                if not re.fullmatch(r"0|[1-9][0-9]*", s):
                    bad(where, f"'{s}' is not an unsigned decimal integer")
        self.axes, self.axis_lines = {}, {}
        for e in ini.get("axes", []):
            where = f"{path}:{e.line}: axes.{e.key}"
            self.check_key(e.key, where)
            self.axes[e.key] = parse_values(e.value, where)
            self.axis_lines[e.key] = e.line
        self.fixed, self.fixed_lines = {}, {}
        for e in ini.get("fixed", []):
            where = f"{path}:{e.line}: fixed.{e.key}"
            self.check_key(e.key, where)
            if e.key in self.axes:
                bad(where, "is also an axis; a key is either swept or fixed")
            if not e.value:
                bad(where, "empty; give the value every run takes")
            self.fixed[e.key] = e.value
            self.fixed_lines[e.key] = e.line
        self.points = self.expand_points()
        self.runs = [(p, s) for p in range(len(self.points)) for s in self.seeds]
        if len(self.runs) > MAX_VALUES:
            bad(path, f"{len(self.runs)} runs; at most {MAX_VALUES} in one sweep")

    @staticmethod
    def check_key(key, where):
        if key in ("seed", "seeds"):
            bad(where, "seeds are given in [sweep] (seeds = 1, 2, 3), not as an axis")
        if not PARAM_KEY.match(key):
            bad(where, "not a parameter key; keys are section.key, as gpumodel --list-params shows")

    def expand_points(self):
        keys = list(self.axes)
        if not keys:
            return [{}]
        if self.mode == "one_at_a_time":  # the scenario's own values, then each axis value alone
            return [{}] + [{k: v} for k in keys for v in self.axes[k]]
        if self.mode == "zip":
            lengths = {k: len(v) for k, v in self.axes.items()}
            if len(set(lengths.values())) > 1:
                detail = ", ".join(f"{k} has {n}" for k, n in lengths.items())
                bad(self.path, f"sweep.mode = zip needs axes of one length: {detail}")
            return [{k: self.axes[k][i] for k in keys} for i in range(len(self.axes[keys[0]]))]
        points = [{}]
        for k in keys:  # the first axis outermost
            points = [dict(p, **{k: v}) for p in points for v in self.axes[k]]
            if len(points) > MAX_VALUES:
                bad(self.path, f"more than {MAX_VALUES} points")
        return points

    def check_keys_against(self, gpumodel):
        """Axis and fixed keys must be parameters the scenario sees (gpumodel --list-params-json)."""
        name = scenario_name(self.scenario)
        if name is None:
            return  # no scenario line found: the model itself will say what is wrong, run by run
        catalogue = wb.param_catalogue(gpumodel)
        scenarios = {s["name"]: s for s in catalogue.get("scenarios", [])}
        if name not in scenarios:
            bad(f"{self.path}: sweep.scenario",
                f"'{self.scenario_given}' names scenario '{name}', which this gpumodel does not have "
                "(gpumodel --list-scenarios)")
        known = {p["name"] for p in catalogue.get("platform", [])}
        known |= {p["name"] for p in scenarios[name].get("params", [])}
        # Another scenario's keys, with whose they are: a suggestion among them says so.
        others = {}
        for s in catalogue.get("scenarios", []):
            for p in s.get("params", []):
                if p["name"] not in known:
                    others.setdefault(p["name"], []).append(s["name"])
        for section, keys, lines in (("axes", self.axes, self.axis_lines),
                                     ("fixed", self.fixed, self.fixed_lines)):
            for k in keys:
                if k not in known:
                    if k in others:
                        hint = f"; it belongs to scenario {', '.join(others[k])}"
                    else:
                        hint = wb.did_you_mean(wb.suggest(k, sorted(known))) or wb.did_you_mean(
                            wb.suggest(k, sorted(others)),
                            {o: f" (scenario {', '.join(others[o])})" for o in others})
                    bad(f"{self.path}:{lines[k]}: {section}.{k}",
                        f"not a parameter of scenario {name} (gpumodel --list-params lists them){hint}")

    def describe(self):
        return {
            "file": self.path,
            "scenario": self.scenario_given,
            "mode": self.mode,
            "seeds": self.seeds,
            "axes": self.axes,
            "fixed": self.fixed,
        }


def scenario_name(path):
    """The `scenario = NAME` line before the first section of a scenario file, or None."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            for line in f:
                s = line.strip()
                if not s or s[0] in "#;":
                    continue
                if s.startswith("["):
                    return None
                key, _, value = s.partition("=")
                if key.strip() == "scenario":
                    return value.strip()
    except OSError:
        return None
    return None
