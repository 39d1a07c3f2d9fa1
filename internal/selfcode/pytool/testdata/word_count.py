DESCRIPTION = "Count the words in a text."
PARAMS_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
CAPABILITIES = {}            # e.g. {"http": ["api.open-meteo.com"]}; shown to the owner

def run(text):
    return str(len(text.split()))
