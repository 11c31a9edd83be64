"""The system layer: what the agent's tools do to files, processes and the network, recorded
under the span that caused it while a session records, and nothing at all otherwise.

* ``files`` (``agent_trace_files``): opens, deletes, renames, directories — span events.
* ``processes`` (``agent_trace_processes``): child processes — child spans; exec and fork — events.
* ``http`` (``agent_trace_http``): HTTP requests of every common client — CLIENT child spans;
  raw socket connects outside an HTTP client — events.

See ``docs/system-layer.md`` for what is recorded, what is not, and what it costs.
"""
