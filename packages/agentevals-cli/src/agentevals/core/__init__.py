"""Common ground of the agentevals package: what every part may import, and which imports no other part.

``errors`` (at the package root), registries (``_registry``), input files and their limits (``_files``,
``limits``, ``_yaml``), the one redactor (``redact``), pydantic error wording (``_validation``), field
docstrings as schema descriptions (``_docs``) and the command's start-up (``_startup``). Nothing here imports
the engine, a reader, an evaluator or a screen.
"""
