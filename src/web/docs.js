// Renders /openapi.json with Swagger UI, served by this server (no CDN, no validator badge).
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#reference',
  validatorUrl: null,
  deepLinking: true,
  tryItOutEnabled: false,
})
