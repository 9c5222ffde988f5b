"""The suites: their names, languages, domains, timing references and user channels."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from duplexeval._fileio import safe_name
from duplexeval.registry import Registry, instance_of

__all__ = ["QUICK_MIN_SHIFTS", "SUITES", "Suite", "get_suite"]


@dataclass(frozen=True)
class Suite:
    """One bundled suite (built from ``specs/NAME`` by :func:`~duplexeval.suites.build_suite`)."""

    name: str
    description: str
    language: str
    domain: str
    gaps: str = "chat"
    """Timing reference of the turn-shift gaps (``chat`` or ``task``)."""
    overlapping_shifts: bool = True
    """Whether the reference's overlapping turn shifts (negative gaps) are drawn.  ``mtr-en``
    leaves them out: every round of an MTR dialogue must give a sample, and M3's plan filters
    a shift whose reply starts before the user's turn ends (``duplexeval.plan._samples``, rule 5),
    which would drop about 3 rounds in 10 from the per-round cells."""
    channels: tuple[int, ...] = (0, 1)
    """User channels the plan evaluates."""
    quick_min_shifts: int | None = None
    """The quick subset's rule for this suite (``None``: :data:`QUICK_MIN_SHIFTS`)."""
    quick_per_label: int | None = None
    """When set, the quick subset is instead the first this many dialogues of each label (the
    spec's ``mtr.label``: one feature or combination; or its ``flexi.scenario``), in spec
    order, so that every per-feature cell has at least 5 events (``flexi-en``: five items of
    each of its six scenarios; ``mtr-en``: five dialogues of each feature, so five events per
    feature and round, and five instruction-following and five safety dialogues)."""
    quick_label_caps: tuple[tuple[str, int], ...] = ()
    """Labels whose quick share is smaller than ``quick_per_label``, as ``(label, count)``:
    ``mtr-en``'s combinations, whose one cell (smooth turn-taking over rounds 1-10) pools the
    rounds, take two dialogues each (10 to 20 smooth rounds: ``S+I+P+B`` has 3 a dialogue)."""
    in_demo: bool = True
    """Whether ``duplexeval demo`` runs this suite when no suite is named."""
    specs: Path | None = None
    """The folder of its dialogue specs (``None``: ``specs/NAME`` in this package; a suite of
    another package names its own)."""

    def __post_init__(self) -> None:
        safe_name(self.name, "suite name")  # it names the build folder in the cache

    def spec_folder(self) -> Path:
        if self.specs is not None:
            return self.specs
        return Path(str(resources.files("duplexeval.suites") / "specs" / self.name))

    @property
    def from_toy(self) -> bool:
        return self.name == "m3-toy-ja-voiced"


_BUILTIN: dict[str, Suite] = {s.name: s for s in [
    Suite("m3-qa-en", "multi-turn QA (TopiOCQA-style), English", "en", "task", "task",
          channels=(0,)),
    Suite("m3-qa-ja", "multi-turn QA, Japanese translation of m3-qa-en", "ja", "task", "task",
          channels=(0,)),
    Suite("m3-chat-en", "casual conversations of about 2 minutes, English", "en", "chat"),
    Suite("m3-chat-ja", "casual conversations of about 2 minutes, Japanese", "ja", "chat"),
    Suite("flexi-en", "FLEXI's six full-duplex scenarios, 30 items each, English", "en", "flexi",
          "task", channels=(0,), in_demo=False, quick_per_label=5),
    Suite("mtr-en", "MTR-DuplexBench-style 10-round dialogues: five features, their "
          "combinations, instruction following, safety; English", "en", "chat",
          channels=(0,), in_demo=False, overlapping_shifts=False, quick_per_label=5,
          quick_label_caps=(("S", 2), ("S+I", 2), ("S+I+P", 2), ("S+I+P+B", 2))),
    Suite("m3-toy-ja-voiced", "the official M3 toy annotations voiced with OpenJTalk", "ja",
          "mixed"),
]}

QUICK_MIN_SHIFTS = 20
"""The quick subset of a suite is its smallest prefix of dialogues (in spec order) whose
multi-gen plan, on the suite's user channels, has at least this many smooth-turn-taking
(TURN_SHIFT) samples: the number of events behind each demo smooth-turn-taking cell, so that no
cell is marked † (n < 20)."""


SUITES: Registry[Suite] = Registry("suite", "suites", _BUILTIN, instance_of(Suite),
                                 sort=False)
"""The suites (:class:`~duplexeval.registry.Registry`, entry-point group ``duplexeval.suites``:
``name = "package.module:SUITE"``, a :class:`Suite` whose ``specs`` names its spec folder)."""


def get_suite(name: str) -> Suite:
    """The suite called ``name``; :class:`DuplexevalError` listing the suites otherwise."""
    return SUITES.get(name)
