# Stage rules: video (see CONTRIBUTING.md).
