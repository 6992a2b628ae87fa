"""The LLM behind an OpenAI-compatible API, and the local llama.cpp server that provides one."""
