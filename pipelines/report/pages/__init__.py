"""One module per study page: its body (what the page shows) and its Slice (when it is written, what it reads)."""
