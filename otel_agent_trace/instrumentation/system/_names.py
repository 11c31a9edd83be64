"""Event and attribute names of the system layer (semantic conventions first, ours beside)."""

from otel_agent_trace.semconv import (  # noqa: F401  (re-exported for the system modules)
    ERROR_TYPE,
    FILE_PATH,
    HTTP_REQUEST_METHOD,
    HTTP_RESPONSE_STATUS_CODE,
    PROCESS_COMMAND_ARGS,
    PROCESS_EXECUTABLE_PATH,
    PROCESS_EXIT_CODE,
    PROCESS_PID,
    PROCESS_WORKING_DIRECTORY,
    SERVER_ADDRESS,
    SERVER_PORT,
    URL_FULL,
)

# Events (instant things, on the current span).
FILE_OPEN = "file.open"
FILE_DELETE = "file.delete"
FILE_RENAME = "file.rename"
FILE_MKDIR = "file.mkdir"
PROCESS_EXEC = "process.exec"
PROCESS_FORK = "process.fork"
PROCESS_SPAWN = "process.spawn"
NETWORK_CONNECT = "network.connect"

# Attributes of ours (no semantic convention covers them).
FILE_ACCESS = "agent_trace.file.access"  # read | write | read_write
FILE_CREATE = "agent_trace.file.create"  # the open may create the file
FILE_MODE = "agent_trace.file.mode"  # the Python mode string, or one derived from os.open flags
FILE_OPERATION = "agent_trace.file.operation"  # unlink, rmdir, rmtree, rename, replace, mkdir
FILE_NEW_PATH = "agent_trace.file.new_path"  # a rename's destination
FILE_SEEN_BY = "agent_trace.file.seen_by"  # "audit" when only the audit hook saw it (no outcome)
PROCESS_EXECUTABLE_NAME = "process.executable.name"
PROCESS_COMMAND_LINE = "process.command_line"
NETWORK_PEER_ADDRESS = "network.peer.address"
NETWORK_PEER_PORT = "network.peer.port"
NETWORK_TRANSPORT = "network.transport"
