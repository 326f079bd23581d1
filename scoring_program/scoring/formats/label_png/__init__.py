"""The label-PNG format: one single-channel PNG of label ids per image, named <image id>.png.

png.py reads headers and chunks without decoding; pillow_array.py and decode_errors.py decode with
Pillow (what a broken file makes Pillow raise, and nothing else, is the file's fault);
prediction.py finds, reads and checks a prediction (PngLabels, the SubmissionFormat); kinds.py
holds its problem kinds; manifest.py the label-free manifest of an image test set. The tasks'
reference readers decode their own PNG layers with the same modules.
"""
