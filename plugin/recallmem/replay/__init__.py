"""Real models' replies, recorded and replayed: over HTTP or in process.

- :mod:`~recallmem.replay.wire_request`: a request as an OpenAI-compatible API receives
  it, its canonical form and the key recordings are filed under;
- :mod:`~recallmem.replay.recordings`: the recordings, and requests written out for a
  model to answer;
- :mod:`~recallmem.replay.answer`: the API's answer to a request, from its recording;
- :mod:`~recallmem.replay.server`: ``ReplayServer``, that API on 127.0.0.1;
- :mod:`~recallmem.replay.chat_model`: ``ReplayChatModel``, ``ChatOpenAI`` answered in
  process. Both are re-exported by :mod:`recallmem.testing`.
"""
