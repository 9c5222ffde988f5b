"""The real-time toolkit every wall-clock adapter runs on: the driver (:mod:`~.driver`: deadline
pacing, monotonic stamps, liveness, the trace), the session side of it (:mod:`~.driven`),
playout of what arrives (:mod:`~.playout`), PCM16 and the streaming resampler (:mod:`~.pcm`),
the WebSocket transport (:mod:`~.websocket`), a connection that reconnects on failure
(:mod:`~.connection`) and credentials from environment variables (:mod:`~.credentials`)."""
