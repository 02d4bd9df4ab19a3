"""Errors meant for the user: each prints as one clear line, never a traceback.

The CLI catches `Graph500Error` (and its subclasses), prints ``graph500: <message>``
on stderr and exits with the error's `exit_code`.
"""

INTERRUPTED_STATUS = 130  # the exit status of a run stopped by Ctrl-C (SIGINT), as shells report it


def is_interrupt(error):
    """Whether ``error`` is Ctrl-C or came of it (Ctrl-C inside a compiled function comes back as a
    SystemError whose context is the KeyboardInterrupt)."""
    while error is not None:
        if isinstance(error, KeyboardInterrupt):
            return True
        error = error.__cause__ or error.__context__
    return False


class Graph500Error(Exception):
    """A user-facing error: bad input, a run that cannot fit, an unreadable file."""

    exit_code = 2


class ValidationError(Graph500Error):
    """A search result broke a validation rule of the Graph500 specification.

    `rule` names the rule (a short kebab-case identifier such as
    ``tree-edge-not-in-graph``); `vertex` and `edge` locate the fault where the
    rule has one.
    """

    exit_code = 1

    def __init__(self, kernel, rule, message, vertex=None, edge=None):
        self.kernel = kernel
        self.rule = rule
        self.vertex = vertex
        self.edge = edge
        super().__init__(f"{kernel} validation failed, rule {rule}: {message}")
