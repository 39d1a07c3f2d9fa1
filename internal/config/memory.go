package config

// MemoryConfig governs the long-term memory (memory.*): the facts the agent
// remembers. Its one key is a context size, like agent.history_chars, so
// the agent may propose to change it (contracts.AgentConfigKeys); the caps
// on the facts themselves (their size and number) are core's.
type MemoryConfig struct {
	// ContextBytes is how much of the remembered facts a turn's prompt
	// gets: the ones most relevant to the owner's message, then the
	// latest, as quoted data; default 2KiB, 0 (none; remember and recall
	// still work) to 64KiB.
	ContextBytes ByteSize `yaml:"context_bytes"`
}

const (
	defaultMemoryContextBytes = 2 << 10
	maxMemoryContextBytes     = 64 << 10
)

// completeMemory applies memory.* defaults and validates them.
func (c *Config) completeMemory() *Error {
	return c.sizeIn("memory.context_bytes", &c.Memory.ContextBytes, defaultMemoryContextBytes, 0, maxMemoryContextBytes)
}

// memoryKeysDoc is the memory section of config.yaml as init writes it.
func memoryKeysDoc() string {
	return `
# Long-term memory: facts shelldon remembers (remember, recall). You list,
# edit and forget them with shelldon memory.
memory:
  # How much of the remembered facts each turn's prompt gets: the ones most
  # relevant to your message, then the latest, as quoted data. 0 puts none
  # in the prompt (remember and recall still work); at most 64KiB.
  #context_bytes: ` + ByteSize(defaultMemoryContextBytes).String() + "\n"
}
