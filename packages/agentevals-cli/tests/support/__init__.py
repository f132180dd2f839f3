"""Test helpers shared across the CLI's test folders (loopback servers, …)."""
