"""The one exception type the package raises for bad input; the CLI turns it into one stderr line."""


class AnalysisError(Exception):
    """Bad input (missing file, malformed JSON, invalid option combination, empty log).

    The message is a complete sentence naming the problem; the CLI prints it and exits non-zero.
    """
