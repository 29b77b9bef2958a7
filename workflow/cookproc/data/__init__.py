"""Data in: the upstream benchmark files (verified, downloaded when absent), the gold clips, the
cooking lexicons, WordNet laid out for NLTK, and the sentence encoders shipped as packages."""
