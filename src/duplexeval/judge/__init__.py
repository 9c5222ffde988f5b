"""The LLM judge client: any OpenAI-compatible chat-completions endpoint, as a library.

One module per job:

* :mod:`.records`: a prompt's identity and score range, an item to judge, sampling settings,
  the result record;
* :mod:`.client`: one endpoint through the ``openai`` package (key from
  ``DUPLEXEVAL_JUDGE_API_KEY`` or ``OPENAI_API_KEY``, never stored or printed);
* :mod:`.retry`: exponential backoff on 429, 5xx and timeouts;
* :mod:`.store`: the SQLite answer cache keyed by model, prompt id and version, messages and
  sampling settings;
* :mod:`.parse`: the answer format, a JSON object with an integer ``score`` and a string
  ``reason``;
* :mod:`.meter`: requests, retries, tokens and cost;
* :mod:`.batch`: judging many items with bounded concurrency; every item comes back, scored or
  unscored with its reason;
* :mod:`.templates`: the versioned prompts shipped as package data (``prompt_texts/*.toml``),
  in English and, where the judged text is Japanese, in Japanese.

* :mod:`.batch_api`: the OpenAI Batch API mode: the uncached items as one asynchronous batch
  job whose answers fill the cache (resumable).

The M3 content metrics and the command-line options live above this package
(``metrics/`` imports ``judge``, never the other way round); ``judge`` imports only the core
modules.

Example::

    client = JudgeClient("http://127.0.0.1:8080/v1", "qwen2.5-7b-instruct")
    with AnswerCache(default_cache_path()) as cache:
        outcome = judge_batch(client, items, cache, max_concurrency=4)
    print(outcome.scored, outcome.unscored, outcome.meter.summary())
"""

from __future__ import annotations

from duplexeval.judge._batch import BatchOutcome, judge_batch
from duplexeval.judge._client import JudgeClient, resolve_api_key
from duplexeval.judge._meter import Prices, UsageMeter
from duplexeval.judge._parse import ParsedAnswer, parse_answer, parse_json_object
from duplexeval.judge._records import JudgeItem, JudgePrompt, JudgeResult, Sampling
from duplexeval.judge._retry import RetryPolicy
from duplexeval.judge._store import AnswerCache, cache_key, default_cache_path
from duplexeval.judge._templates import PromptTemplate, load_prompt, prompt_ids

__all__ = [
    "AnswerCache",
    "BatchOutcome",
    "JudgeClient",
    "JudgeItem",
    "JudgePrompt",
    "JudgeResult",
    "ParsedAnswer",
    "Prices",
    "PromptTemplate",
    "RetryPolicy",
    "Sampling",
    "UsageMeter",
    "cache_key",
    "default_cache_path",
    "judge_batch",
    "load_prompt",
    "parse_answer",
    "parse_json_object",
    "prompt_ids",
    "resolve_api_key",
]
