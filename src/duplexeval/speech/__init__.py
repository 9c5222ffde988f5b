"""Speech engines: voice activity, ASR (Whisper), TTS engines, Japanese text handling and the
packaged clip bank.  The lowest stage above the core: it knows audio and text, not dialogues."""
