"""pcp: own your AI context."""

__version__ = "0.1.0"
