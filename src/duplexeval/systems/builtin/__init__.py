"""The built-in systems: ``silence`` and ``reference`` (:mod:`~.replay`), ``scripted``
(:mod:`~.scripted`, timing oracles with logged speech) and ``cascade`` (:mod:`~.cascade`, VAD +
ASR + LLM + TTS on CPU), and the session base they share (:mod:`~.copyable_session`)."""
