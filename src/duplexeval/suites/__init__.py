"""Bundled benchmark suites: built offline from specs shipped in the package, cached.

=====================  ==========================================================
``m3-qa-en``           multi-turn information-seeking QA, English (specs/m3-qa-en)
``m3-qa-ja``           the same dialogues in Japanese (same ids)
``m3-chat-en``         casual two-person conversations of about 2 minutes, English
``m3-chat-ja``         casual conversations, Japanese
``flexi-en``           FLEXI's six scenarios (turn taking, pause handling, user and model
                       interrupt, user and model backchannel), 30 one-item dialogues each,
                       English; each record's ``flexi`` field (:mod:`duplexeval.data._flexi_record`)
                       holds the scenario's annotations
``mtr-en``             MTR-DuplexBench-style 10-round dialogues (features, combinations,
                       instruction following, safety; round annotations in the record's
                       ``mtr`` field, see :mod:`duplexeval.data._mtr_record`)
``m3-toy-ja-voiced``   the official M3 toy annotations voiced with OpenJTalk (needs the
                       third-party toy data: ``$DUPLEXEVAL_M3_TOY`` or ``shared/m3_toy/ja``)
=====================  ==========================================================

A suite is built deterministically (:class:`~duplexeval.synth._build.Synthesizer`, seed 0) into
``cache_root()/suites/NAME-KEY``, where KEY hashes the specs, the synthesis settings and the TTS
engines' settings, so a change to any of them builds anew and an unchanged suite is reused.  The
build writes into a temporary folder that is renamed into place when complete, so an interrupted
build leaves nothing half-written.  Each built suite holds ``quality.json`` (see
:mod:`duplexeval.synth._quality`; without the ASR round trip for subsets such as the quick
subsets, whose TTS is the full suite's).

The *quick subset* of a suite (``limit="quick"``, what ``duplexeval demo`` runs) is the smallest
prefix of its dialogues whose multi-gen plan has :data:`QUICK_MIN_SHIFTS` (or the suite's own
``quick_min_shifts``) smooth-turn-taking samples on the suite's user channels; it is found
while synthesizing, dialogue by dialogue.  A suite with ``quick_per_label`` takes the first
dialogues of each label instead: ``flexi-en`` its first five items of each scenario (so each
scenario's cell has at least 5 events), ``mtr-en`` five of each feature, instruction-following
and safety set (5 events per feature or item set and round) and two of each combination.

The demo's quick subsets ship with the package as packs (annotations as built, audio
Opus-coded, :mod:`duplexeval.suites._quick_pack`): while a pack is current with the specs,
``build_suite(NAME, limit="quick")`` decodes it in seconds instead of synthesizing for
minutes (``synthesize=True`` synthesizes anyway), and so does ``build_suite(NAME, limit=k)``
(``eval --limit k``) where the pack holds the suite's first ``k`` dialogues.
"""

from duplexeval.suites._build import (
           build_suite,
           shift_samples,
           subset_label,
           suite_path,
           suite_rows,
)
from duplexeval.suites._registry import QUICK_MIN_SHIFTS, SUITES, Suite, get_suite

__all__ = ["QUICK_MIN_SHIFTS", "SUITES", "Suite", "build_suite", "get_suite", "shift_samples",
           "subset_label", "suite_path", "suite_rows"]
