"""Text processing for spoken-dialogue analysis: word segmentation and normalisation."""
