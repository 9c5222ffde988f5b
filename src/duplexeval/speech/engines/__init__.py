"""TTS engine implementations, one module each; see :mod:`duplexeval.speech._tts` for the list.

Importing an engine module is cheap: the TTS packages are imported when an engine is built.
"""
