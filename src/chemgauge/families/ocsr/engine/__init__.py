"""Image-to-structure recognizer back-ends: OSRA, a command, an HTTP vision model, a callable."""
