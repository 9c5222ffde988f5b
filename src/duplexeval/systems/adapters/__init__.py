"""Adapters of model systems, one subpackage each: clients of model servers (``moshi_ws``,
``openai_realtime``, ``vllm_omni``, ``gemini_live``, ``freeze_omni``, ``duplexcascade``),
in-process models on their streaming API (``bayling``, ``moshi_inproc``,
``personaplex_inproc``) and whole-file commands (:mod:`~.command`)."""
