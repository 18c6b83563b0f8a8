package api

import "github.com/gin-gonic/gin"

// Route groups whose handlers are being written. Each function moves into
// its resource's file when that lands; this file then disappears.

func (h *handlers) identityRoutes(v1 *gin.RouterGroup) {}

func (h *handlers) billingRoutes(v1, dash *gin.RouterGroup) {}
